import type { Knex } from 'knex';
import { ChainVerificationError, RpcUnavailableError } from '../../chains/errors.ts';
import type { OrderChainReader } from '../../chains/order-chain.ts';
import type { ChainStateReader } from '../../chains/state.ts';
import { searchStart } from '../../chains/timing.ts';
import type { TransactionVerifier, VerifiedAction } from '../../chains/verify.ts';
import type { RegistryCache } from '../../db/repositories/registry-cache.ts';
import { findTradeLifecycle, type TradeLifecycleRecord } from '../../db/repositories/trade-lifecycle.ts';
import type { Clock } from '../clock.ts';
import { TradeNotFoundError } from '../lifecycle/errors.ts';
import {
  chainFact, lockDeadline, lockEventMissing, lockWindowAsksChain, lockWindowReading, lockWindowVerdict, lookAgain, orderStateName,
  reservationExpiryAsksChain, reservationExpiryVerdict, stateOf, type DepositReading, type LockWindowReading, type LockWindowVerdict,
} from '../lifecycle/index.ts';
import type { AppliedEvent } from '../orchestrator.ts';
import { applyEvent } from './apply-event.ts';
import { chainEventRef, verifyOn, type AskableChain } from './verify-confirmation.ts';

/** What the chain readings a timer asks for need. */
export interface ChainReadingDeps {
  knex: Knex;
  registryCache: RegistryCache;
  verifier: TransactionVerifier;
  now: Clock;
  /** SIGNED_REQUEST_TTL_SECONDS: bounds how far back a lock nobody reported is looked for. */
  signedRequestTtlSeconds: number;
}

/**
 * The lock window's timer decided by the ad chain (the lifecycle's `lockWindowVerdict`), or
 * undefined to let the machine apply LOCK_WINDOW_CLOSED (the window closed with no lock, the chain
 * cannot be asked, or the trade is no longer DEPOSITED: then the timer is stale). The chain's time
 * is read before the order's state: once a final block is stamped past the lock deadline, any lock
 * is in an earlier block, so the state read after it shows it. A lock on chain is delivered as
 * LOCK_CONFIRMED with its verified OrderLocked event (found by order hash); a lock whose event cannot
 * be found or verified yet keeps the trade DEPOSITED and the window is looked at again (the machine's
 * `lookAgain`). An ad chain that does not answer throws `RpcUnavailableError`: the timer is retried,
 * nothing expires on a guess.
 */
export async function lockWindowOnChain(
  deps: ChainReadingDeps, chainState: ChainStateReader, tradeId: string, carriedOut?: boolean,
): Promise<AppliedEvent | undefined> {
  const trade = await findTradeLifecycle(deps.knex, tradeId);
  if (!trade) throw new TradeNotFoundError(tradeId);
  const state = stateOf(trade);
  if (!lockWindowAsksChain(state)) return undefined;
  // A chain with no RPC URL is one this service cannot ask (as for a reservation), not an outage to retry.
  const registered = await deps.registryCache.chain(trade.adChainId);
  const adChain: AskableChain | undefined = registered?.rpcUrl ? { ...registered, rpcUrl: registered.rpcUrl } : undefined;
  const adManager = trade.orderParams.adManager;
  let reading: LockWindowReading = { readable: false };
  if (adChain) {
    const chainTime = await chainState.finalTime(adChain);
    const orderState = chainTime === undefined ? undefined : await chainState.orderState(adChain, adManager, trade.orderHash);
    if (chainTime === undefined || orderState === undefined) {
      throw new RpcUnavailableError(`chain ${adChain.chainId} cannot be read: the lock window of trade ${tradeId} is decided later`);
    }
    reading = lockWindowReading(orderStateName('AdManager', orderState), chainTime);
  }
  const verdict = lockWindowVerdict(state, reading, BigInt(lockDeadline(trade.orderParams)));
  const later = (wait: LockWindowVerdict & { do: 'wait' }): AppliedEvent => ({
    state, duplicate: false, stale: true, followUps: [lookAgain(wait.reason, wait.seconds, deps.now())],
  });
  if (verdict.do === 'close') return undefined;
  if (verdict.do === 'wait') return later(verdict);
  const since = searchStart(trade.reservationExpiresAt, deps.signedRequestTtlSeconds);
  const lock = chainFact('lock');
  const txHash = await chainState.findEventTransaction(adChain!, { contractAddress: adManager, event: lock.event, topics: { key: trade.orderHash }, since });
  if (!txHash) return later(lockEventMissing('not-found'));
  let verified: VerifiedAction;
  try {
    verified = await verifyOn(deps.verifier, adChain!, lock, txHash, orderFactsOf(trade));
  } catch (error) {
    if (error instanceof RpcUnavailableError) throw error;
    if (error instanceof ChainVerificationError) return later(lockEventMissing('unverified'));
    throw error;
  }
  return { ...(await applyEvent(deps.knex, tradeId, lock.machineEvent, { chainEvent: chainEventRef(verified), carriedOut })), appliedAs: lock.machineEvent };
}

/**
 * The reservation's expiry checked with the order chain before the reservation is given back: a
 * deposit the chain shows (confirmed here or not) keeps it, and the timer is stale (the lifecycle's
 * `reservationExpiryVerdict`); otherwise RESERVATION_EXPIRED is applied. An order chain that cannot
 * be read throws `RpcUnavailableError` (the timer is retried); one this service cannot ask is no
 * reading, and the expiry goes ahead on the deposit request's deadline.
 */
export async function reservationExpiryOnChain(
  deps: ChainReadingDeps, reader: OrderChainReader, tradeId: string, read?: TradeLifecycleRecord, carriedOut?: boolean,
): Promise<AppliedEvent> {
  const trade = read ?? (await findTradeLifecycle(deps.knex, tradeId));
  if (!trade) throw new TradeNotFoundError(tradeId);
  const reading = await depositReading(deps, reader, trade);
  if (reservationExpiryVerdict(stateOf(trade), reading).do === 'keep') {
    return { state: stateOf(trade), followUps: [], duplicate: false, stale: true };
  }
  return applyEvent(deps.knex, tradeId, { type: 'RESERVATION_EXPIRED' }, { read: trade, carriedOut });
}

/** The OrderPortal's state of a PENDING trade's order; no reading for a trade no longer PENDING (the machine makes its expiry stale). */
async function depositReading(deps: ChainReadingDeps, reader: OrderChainReader, trade: TradeLifecycleRecord): Promise<DepositReading> {
  if (!reservationExpiryAsksChain(stateOf(trade))) return { readable: false };
  // A chain with no RPC URL is one this service cannot ask (the reader says null), not an outage to retry.
  const orderChain = await deps.registryCache.chain(trade.orderChainId);
  if (!orderChain) return { readable: false };
  const orderState = await reader.orderState(orderChain, trade.orderParams.orderPortal, trade.orderHash);
  return orderState === null ? { readable: false } : { readable: true, orderState };
}

/** What verifying a trade's transactions needs of a stored trade. */
export function orderFactsOf(trade: TradeLifecycleRecord) {
  const { orderHash, adChainId, orderChainId, orderParams } = trade;
  return {
    orderHash, adChainId, orderChainId, adManager: orderParams.adManager, orderPortal: orderParams.orderPortal,
    orderAmount: orderParams.orderAmount, adAmount: orderParams.adAmount,
  };
}
