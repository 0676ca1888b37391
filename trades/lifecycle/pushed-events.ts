import type { PushedEventData, TradeSnapshot } from '../../domain/index.ts';
import { isTerminal, type TradeEvent, type TradeState } from './machine.ts';
import { askableUnlock, unlockableBy, whoseUnlockIsDue } from './views.ts';

/** The trade fields every trade event carries besides its state. */
export interface TradeIdentity {
  tradeId: string;
  adId: string;
}

/** The trade as it stands in `state`, as events show it. */
export function tradeSnapshot(trade: TradeIdentity, state: TradeState): TradeSnapshot {
  return {
    tradeId: trade.tradeId,
    adId: trade.adId,
    status: state.status,
    proofReady: state.proof === 'ready',
    bridgerClaimed: state.bridgerClaimed,
    adCreatorClaimed: state.adCreatorClaimed,
    unlockDue: whoseUnlockIsDue(state),
  };
}

/** Why a trade expired, as `trade.expired` says it. */
function expiryReason(event: TradeEvent): 'reservation' | 'lock_window' | 'lock_released' {
  if (event.type === 'RESERVATION_EXPIRED') return 'reservation';
  if (event.type === 'LOCK_RELEASED') return 'lock_released';
  return 'lock_window';
}

/**
 * What a transition publishes, in order: the status change (and why it expired), the proof, the
 * claims, then whose unlock is now due. A transition into a terminal state (SETTLED, EXPIRED)
 * publishes its status change last, after its claims and its `trade.expired`: a trade's last event
 * is its `trade.status_changed` into a terminal state, so a client that stops there has seen every
 * claim. Pure: the caller writes these in the transaction that saves `after`. A proof finishing on
 * an expired trade publishes nothing: no unlock can follow.
 */
export function tradeEventsOf(trade: TradeIdentity, before: TradeState, after: TradeState, event: TradeEvent): PushedEventData[] {
  const snapshot = tradeSnapshot(trade, after);
  const events: PushedEventData[] = [];
  const statusChange: PushedEventData[] = after.status === before.status
    ? []
    : [{ type: 'trade.status_changed', data: { ...snapshot, previousStatus: before.status } }];
  const terminal = isTerminal(after);
  if (!terminal) events.push(...statusChange);
  if (after.proof === 'ready' && before.proof !== 'ready' && !terminal) events.push({ type: 'trade.proof_ready', data: snapshot });
  if (after.bridgerClaimed && !before.bridgerClaimed) events.push({ type: 'trade.claimed', data: { ...snapshot, side: 'ad' } });
  if (after.adCreatorClaimed && !before.adCreatorClaimed) events.push({ type: 'trade.claimed', data: { ...snapshot, side: 'order' } });
  // The unlock in turn, once askable (lifecycle.ts, the one unlock rule), with who may ask for it.
  const side = askableUnlock(after);
  if (side && side !== askableUnlock(before) && snapshot.unlockDue) {
    events.push({ type: 'trade.unlock_due', data: { ...snapshot, unlockDue: snapshot.unlockDue, side, unlockableBy: unlockableBy(after) } });
  }
  if (terminal && statusChange.length > 0) {
    if (after.status === 'EXPIRED') events.push({ type: 'trade.expired', data: { ...snapshot, reason: expiryReason(event) } });
    events.push(...statusChange);
  }
  return events;
}
