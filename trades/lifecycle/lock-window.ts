import { chainFact, type ManagerOrderState } from './chain-facts.ts';
import type { LookAgainReason } from './follow-ups.ts';
import type { TradeState } from './machine.ts';
import { LOCK_WINDOW_RECHECK_MAX_SECONDS, LOCK_WINDOW_RECHECK_MIN_SECONDS } from './windows.ts';

/**
 * What the ad chain says when a trade's lock window timer fires (read by the timer's activity from
 * the AdManager and the chain's latest block or ledger): `unreadable` when this service cannot ask
 * it (no RPC URL registered); a chain that can be asked but does not answer now is not a reading:
 * the activity throws and the timer is retried, never decided on a guess.
 */
export type LockWindowReading =
  | { readable: false }
  /**
   * `locked`: the AdManager holds a lock for the order (Locked, or later Unlocked or Released). `chainTime`: the latest
   * block's or ledger's timestamp, unix seconds.
   */
  | { readable: true; locked: boolean; chainTime: bigint };

/** What a fired lock window timer does (`lockWindowVerdict`): expire, deliver the chain's lock, or look again in `seconds`. */
export type LockWindowVerdict = { do: 'close' } | { do: 'lock' } | { do: 'wait'; seconds: number; reason: LookAgainReason };

/** Whether a fired lock window timer asks the ad chain at all: only a DEPOSITED trade has an open window (any other makes the timer stale). */
export function lockWindowAsksChain(state: TradeState): boolean {
  return state.status === 'DEPOSITED';
}


/**
 * What a fired lock window timer does, decided by the chain, not by this service's clock: a lock
 * the AdManager holds is the trade's, reported or not (`lock`: its event is delivered as
 * LOCK_CONFIRMED, so the books keep the amount locked as the chain does); while the chain's latest
 * time is at or before the lock deadline (`deadline`, unix seconds: the last second lockForOrder is
 * accepted, chains/timing.ts) a lock can still be mined, so the window is looked at again (`wait`,
 * after the chain's remaining seconds, bounded to LOCK_WINDOW_RECHECK_MIN/MAX_SECONDS); only once
 * the chain's time is past it with no lock does the window close (`close`: LOCK_WINDOW_CLOSED, the
 * trade expires). A chain this service cannot ask (no RPC URL) closes on the service's clock, as a
 * reservation does (expiry-veto.ts); a trade no longer DEPOSITED is the machine's stale
 * timer (`close` lets `transition` say so).
 */
export function lockWindowVerdict(state: TradeState, reading: LockWindowReading, deadline: bigint): LockWindowVerdict {
  if (!lockWindowAsksChain(state) || !reading.readable) return { do: 'close' };
  if (reading.locked) return { do: 'lock' };
  if (reading.chainTime > deadline) return { do: 'close' };
  const left = Number(deadline - reading.chainTime) + 1;
  const seconds = Math.min(LOCK_WINDOW_RECHECK_MAX_SECONDS, Math.max(LOCK_WINDOW_RECHECK_MIN_SECONDS, left));
  return { do: 'wait', seconds, reason: 'chain-before-deadline' };
}


/**
 * The reading of an ad chain that can be asked: the AdManager holds a lock for the order when its
 * state is one the lock leads to (chain-facts.ts: Locked, or later Unlocked or Released).
 */
export function lockWindowReading(managerState: ManagerOrderState, chainTime: bigint): LockWindowReading {
  return { readable: true, locked: chainFact('lock').shownBy.includes(managerState), chainTime };
}

/**
 * What a lock the AdManager shows does when its event cannot be delivered yet (not found by order
 * hash, or not verifiable: not final, refused for now): the trade stays DEPOSITED and the window is
 * looked at again after the longest wait (the audit reports a lock that stays so).
 */
export function lockEventMissing(why: 'not-found' | 'unverified'): LockWindowVerdict & { do: 'wait' } {
  return { do: 'wait', seconds: LOCK_WINDOW_RECHECK_MAX_SECONDS, reason: why === 'not-found' ? 'lock-event-not-found' : 'lock-event-unverified' };
}
