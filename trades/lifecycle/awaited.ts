import { actionOf, chainFact, type ConfirmationKind, type TradeAction } from './chain-facts.ts';
import type { TradeState } from './machine.ts';
import { unlockInTurn } from './unlock-order.ts';

/** Which action a transaction reported now must be, or why none is awaited (a conflict with the state). */
export type AwaitedAction = { ok: true; action: TradeAction } | { ok: false; reason: string };

/**
 * The action a transaction not yet recorded, reported through `kind`, must be in `state` (its row
 * of chain-facts.ts says what to verify): `/confirm` takes the deposit until it is confirmed, the
 * lock after (on an EXPIRED trade too, by whether it was deposited, so that a real late deposit or
 * lock is told apart from a wrong transaction: the machine then refuses it as late, 409, not as
 * foreign, 422), then on a LOCKED trade whose ad-side unlock is not confirmed the lock's release
 * (the Maker reports its releaseLock after lockExpiry; the contract refuses it earlier);
 * `/unlock/confirm` takes the unlock in turn (unlock-order.ts `unlockInTurn`, whichever party
 * reports it), and only on a LOCKED trade.
 */
export function awaitedAction(state: TradeState, kind: ConfirmationKind): AwaitedAction {
  if (kind === 'deposit-or-lock') {
    if (state.status === 'LOCKED' && !state.bridgerClaimed) return { ok: true, action: actionOf(chainFact('lockRelease')) };
    const deposited = state.status !== 'PENDING' && !(state.status === 'EXPIRED' && state.proof === 'none');
    return { ok: true, action: actionOf(chainFact(deposited ? 'lock' : 'deposit')) };
  }
  if (state.status === 'SETTLED') return { ok: false, reason: 'both unlocks are confirmed: the trade is settled' };
  if (state.status !== 'LOCKED') return { ok: false, reason: `the trade is ${state.status}: unlocks need a LOCKED trade` };
  const side = unlockInTurn(state);
  if (side === null) return { ok: false, reason: 'both unlocks are confirmed' };
  return { ok: true, action: actionOf(chainFact(side === 'ad' ? 'adUnlock' : 'orderUnlock')) };
}
