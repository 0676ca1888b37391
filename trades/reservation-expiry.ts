import type { OrderChainReader } from '../chains/order-chain.ts';
import type { ChainConnection } from '../db/repositories/registry-cache.ts';
import type { TradeLifecycleRecord } from '../db/repositories/trade-lifecycle.ts';
import type { DepositReading } from './lifecycle/index.ts';

/**
 * Before a reservation is given back (RESERVATION_EXPIRED), reads the order chain for the
 * reservation-expiry veto (trades/lifecycle/expiry-veto.ts decides): the OrderPortal's state of the
 * order. An order chain that cannot be read (RPC down) throws `RpcUnavailableError`, so the timer
 * is retried; one this service cannot ask (a Stellar chain today, or no RPC URL: `orderState`
 * null) is no reading, and the expiry goes ahead on the deposit request's deadline. A trade no
 * longer PENDING is not read: the machine makes its expiry stale itself.
 */
export async function depositReading(
  reader: OrderChainReader,
  orderChain: ChainConnection,
  trade: Pick<TradeLifecycleRecord, 'status' | 'orderHash' | 'orderParams'>,
): Promise<DepositReading> {
  if (trade.status !== 'PENDING') return { readable: false };
  const orderState = await reader.orderState(orderChain, trade.orderParams.orderPortal, trade.orderHash);
  return orderState === null ? { readable: false } : { readable: true, orderState };
}
