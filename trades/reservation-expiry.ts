import type { OrderChainReader, PortalOrderState } from '../chains/order-chain.ts';
import type { ChainConnection } from '../db/repositories/registry-cache.ts';
import type { TradeLifecycleRecord } from '../db/repositories/trade-lifecycle.ts';

/**
 * Before a reservation is given back (RESERVATION_EXPIRED), asks the order chain whether the
 * deposit happened: the OrderPortal's state of the order, or null when it shows none. A deposit that
 * is on chain keeps its reservation, whether or not anybody has confirmed it yet (it is a fact: its
 * confirmation, however late, must find the liquidity it was promised), so the caller applies the
 * expiry as a stale timer (a no-op). An order chain that cannot be read (RPC down) throws
 * `RpcUnavailableError`, so the timer is retried; one this service cannot ask (a Stellar chain
 * today, or no RPC URL: `orderState` null) lets the expiry go ahead on the deposit request's deadline.
 */
export async function depositOnChain(
  reader: OrderChainReader,
  orderChain: ChainConnection,
  trade: Pick<TradeLifecycleRecord, 'status' | 'orderHash' | 'orderParams'>,
): Promise<PortalOrderState | null> {
  if (trade.status !== 'PENDING') return null; // the machine makes the expiry stale itself
  const state = await reader.orderState(orderChain, trade.orderParams.orderPortal, trade.orderHash);
  return state !== null && state !== 'None' ? state : null;
}
