import type { PushedEventData, TradeSnapshot, UnlockDue } from '../domain/index.ts';
import { isTerminal, type TradeEvent, type TradeState } from './lifecycle.ts';

/** The trade fields every trade event carries besides its state. */
export interface TradeIdentity {
  tradeId: string;
  adId: string;
}

/**
 * The unlock that may be asked for in `state` (architecture.md "Unlock order", as
 * lifecycle.ts `unlockDue` decides it per caller): the ad side to the Maker first, then the order
 * side to the Bridger or the Maker; none before LOCKED with a ready proof, none once both are in.
 */
export function unlockDueOf(state: TradeState): UnlockDue | null {
  if (state.status !== 'LOCKED' || state.proof !== 'ready') return null;
  if (!state.bridgerClaimed) return { side: 'ad', parties: ['maker'] };
  if (!state.adCreatorClaimed) return { side: 'order', parties: ['bridger', 'maker'] };
  return null;
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
    unlockDue: unlockDueOf(state),
  };
}

/**
 * What a transition publishes, in order: the status change (and why it expired), the proof, the
 * claims, then whose unlock is now due. Pure: the caller writes these in the transaction that
 * saves `after`. A proof finishing on an expired trade publishes nothing: no unlock can follow.
 */
export function tradeEventsOf(trade: TradeIdentity, before: TradeState, after: TradeState, event: TradeEvent): PushedEventData[] {
  const snapshot = tradeSnapshot(trade, after);
  const events: PushedEventData[] = [];
  if (after.status !== before.status) {
    events.push({ type: 'trade.status_changed', data: { ...snapshot, previousStatus: before.status } });
    if (after.status === 'EXPIRED') {
      events.push({ type: 'trade.expired', data: { ...snapshot, reason: event.type === 'RESERVATION_EXPIRED' ? 'reservation' : 'lock_window' } });
    }
  }
  if (after.proof === 'ready' && before.proof !== 'ready' && !isTerminal(after)) events.push({ type: 'trade.proof_ready', data: snapshot });
  if (after.bridgerClaimed && !before.bridgerClaimed) events.push({ type: 'trade.claimed', data: { ...snapshot, side: 'ad' } });
  if (after.adCreatorClaimed && !before.adCreatorClaimed) events.push({ type: 'trade.claimed', data: { ...snapshot, side: 'order' } });
  const due = snapshot.unlockDue;
  const dueBefore = unlockDueOf(before);
  if (due && due.side !== dueBefore?.side) events.push({ type: 'trade.unlock_due', data: { ...snapshot, unlockDue: due } });
  return events;
}
