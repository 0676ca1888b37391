import type { Knex } from 'knex';
import { findTradeLifecycle, openTrades, type TradeLifecycleRecord } from '../db/repositories/trade-lifecycle.ts';
import { followUpsOf, isTerminal, resume, stateOf, type FollowUp, type TradeState } from './lifecycle/index.ts';
import type { RestorableTrade, ResumableTrade } from './orchestrator.ts';

export type { RestorableTrade, ResumableTrade } from './orchestrator.ts';

/** Every open trade (PENDING, DEPOSITED, LOCKED) with its `resume` follow-ups. */
export async function resumableTrades(knex: Knex): Promise<ResumableTrade[]> {
  return (await openTrades(knex)).map((trade) => ({ tradeId: trade.id, followUps: resumeFollowUps(trade) }));
}

/** The trade `row` as a RestorableTrade. */
export function restorableOf(row: TradeLifecycleRecord): RestorableTrade {
  return {
    trade: { tradeId: row.id, adId: row.adId, routeId: row.routeId, reservationExpiresAt: row.reservationExpiresAt, lockDeadline: row.lockDeadline },
    state: stateOf(row),
    followUps: resumeFollowUps(row),
  };
}

/** Every open trade as a RestorableTrade (the reconcile command's side of the comparison). */
export async function restorableTrades(knex: Knex): Promise<RestorableTrade[]> {
  return (await openTrades(knex)).map(restorableOf);
}

/** The trade `tradeId` as a RestorableTrade while it is open; undefined when it is over or unknown. */
export async function openRestorableTrade(knex: Knex, tradeId: string): Promise<RestorableTrade | undefined> {
  const row = await findTradeLifecycle(knex, tradeId);
  if (!row || isTerminal(stateOf(row))) return undefined;
  return restorableOf(row);
}

/** The trade's state as the database holds it, open or over; undefined when the database has no such trade. */
export async function storedTradeState(knex: Knex, tradeId: string): Promise<TradeState | undefined> {
  const row = await findTradeLifecycle(knex, tradeId);
  return row && stateOf(row);
}

function resumeFollowUps(trade: TradeLifecycleRecord): FollowUp[] {
  return followUpsOf(resume(stateOf(trade)), {
    reservationExpiresAt: trade.reservationExpiresAt.toISOString(), lockDeadline: trade.lockDeadline.toISOString(),
  });
}
