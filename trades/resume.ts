import type { Knex } from 'knex';
import { openTrades } from '../db/repositories/trade-lifecycle.ts';
import { stateOf } from './activities.ts';
import { followUpsOf, resume, type FollowUp } from './lifecycle/index.ts';

/** A trade that may still move, with what an orchestrator carries out again after a restart. */
export interface ResumableTrade {
  tradeId: string;
  /** The machine's `resume` commands: the timer of its state armed, its proof run if unfinished. */
  followUps: FollowUp[];
}

/** Every open trade (PENDING, DEPOSITED, LOCKED) with its `resume` follow-ups. */
export async function resumableTrades(knex: Knex): Promise<ResumableTrade[]> {
  return (await openTrades(knex)).map((trade) => ({
    tradeId: trade.id,
    followUps: followUpsOf(resume(stateOf(trade)), {
      reservationExpiresAt: trade.reservationExpiresAt.toISOString(), lockDeadline: trade.lockDeadline.toISOString(),
    }),
  }));
}
