import { findTradeLifecycle, type TradeLifecycleRecord } from '../../db/repositories/trade-lifecycle.ts';
import { TradeNotFoundError } from '../lifecycle/errors.ts';
import type { TradeEvent } from '../lifecycle/index.ts';
import type { AppliedEvent, ChainEventRef, StartedTrade } from '../orchestrator.ts';
import type { TradeContext } from './context.ts';

/**
 * Applies `event` to `trade` (as the use case read it, once, without a lock) in one transaction
 * (applier/apply-event.ts: the machine, the books, the pushed events, the follow-ups outbox),
 * then hands the follow-ups to the orchestrator (`carryOut`). The event stands whatever the
 * orchestrator does: one that does not know the trade yet (its start failed) is given the start and
 * asked again; one that cannot be reached leaves the outbox rows pending for its sweep. A repeat
 * (duplicate, stale) hands over nothing.
 */
export async function applyTradeEvent(ctx: TradeContext, trade: TradeLifecycleRecord, event: TradeEvent, chainEvent?: ChainEventRef): Promise<AppliedEvent> {
  const { deps } = ctx;
  const applied = await deps.events.applyEvent({ tradeId: trade.id, event, chainEvent, read: trade });
  await deps.onApplied?.(trade.id, applied, applied.appliedAs ?? event);
  if (applied.duplicate || applied.stale || applied.followUps.length === 0) return applied;
  const started: StartedTrade = {
    tradeId: trade.id, adId: trade.adId, routeId: trade.routeId, reservationExpiresAt: trade.reservationExpiresAt, lockDeadline: trade.lockDeadline,
  };
  try {
    await deps.orchestrator().carryOut(started, applied);
  } catch (error) {
    try {
      if (!(await deps.starts.startIfPending(trade.id))) throw error;
      await deps.orchestrator().carryOut(started, applied);
    } catch (again) {
      deps.onCarryOutFailed?.(trade.id, again);
    }
  }
  return applied;
}

/**
 * Ends a reservation now, as its timer would (trades/use-cases/unbacked-reservations.ts): RESERVATION_EXPIRED
 * applied like any event (the OrderPortal asked first: a deposit that happened keeps it).
 */
export function expireReservation(ctx: TradeContext) {
  return async (tradeId: string): Promise<AppliedEvent> => {
    const trade = await findTradeLifecycle(ctx.knex, tradeId);
    if (!trade) throw new TradeNotFoundError(tradeId);
    return applyTradeEvent(ctx, trade, { type: 'RESERVATION_EXPIRED' });
  };
}
