import type { TradeEvent, TradeState } from './machine.ts';

/** How a deposited trade ended: settled (both unlocks), or expired (no lock in its window, or the lock released unpaid). */
export const TRADE_OUTCOMES = ['settled', 'expired_unlocked', 'expired_released'] as const;
export type TradeOutcome = (typeof TRADE_OUTCOMES)[number];

/**
 * Who an expiry is owed to: `service` when the trade expired without its proof ready (the service did not
 * do its part, and nobody could unlock), `counterparty` when the proof was ready (a Maker who never locked,
 * an unlock nobody submitted). The settlement SLO pages on the first only. A settled trade's is `none`.
 */
export const OUTCOME_CAUSES = ['none', 'service', 'counterparty'] as const;
export type OutcomeCause = (typeof OUTCOME_CAUSES)[number];

/**
 * The outcome a (new, applied) event ends a deposited trade with, and whose it is, if it ends one:
 * the unlock that makes it SETTLED (a trade settles once: a later unlock is a duplicate), the lock
 * window closing on a DEPOSITED trade, the lock released. A reservation expiring before any deposit
 * is not an outcome: no money moved.
 */
export function outcomeOf(type: TradeEvent['type'], state: TradeState): { outcome: TradeOutcome; cause: OutcomeCause } | undefined {
  const outcome: TradeOutcome | undefined =
    type === 'UNLOCK_CONFIRMED' && state.status === 'SETTLED' ? 'settled'
      : type === 'LOCK_WINDOW_CLOSED' && state.status === 'EXPIRED' ? 'expired_unlocked'
        : type === 'LOCK_RELEASED' && state.status === 'EXPIRED' ? 'expired_released'
          : undefined;
  if (!outcome) return undefined;
  return { outcome, cause: outcome === 'settled' ? 'none' : state.proof === 'ready' ? 'counterparty' : 'service' };
}
