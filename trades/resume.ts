import type { Knex } from 'knex';
import { openTrades } from '../db/repositories/trade-lifecycle.ts';
import { followUpsOf, resume, stateOf } from './lifecycle/index.ts';
import type { ResumableTrade } from './orchestrator.ts';

export type { ResumableTrade } from './orchestrator.ts';

/** Every open trade (PENDING, DEPOSITED, LOCKED) with its `resume` follow-ups. */
export async function resumableTrades(knex: Knex): Promise<ResumableTrade[]> {
  return (await openTrades(knex)).map((trade) => ({
    tradeId: trade.id,
    followUps: followUpsOf(resume(stateOf(trade)), {
      reservationExpiresAt: trade.reservationExpiresAt.toISOString(), lockDeadline: trade.lockDeadline.toISOString(),
    }),
  }));
}
