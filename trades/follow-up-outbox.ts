import type { Knex } from 'knex';
import { markCarriedOut, pendingFollowUps } from '../db/repositories/trade-follow-ups.ts';
import type { FollowUpOutbox, TradeFollowUp } from './orchestrator.ts';

/** How many pending rows one sweep takes. */
const SWEEP_LIMIT = 500;

/** The follow-ups outbox over the service's database, for the orchestrators. */
export function followUpOutbox(knex: Knex): FollowUpOutbox {
  return {
    pending: (olderThanMs) => pendingFollowUps<TradeFollowUp>(knex, { olderThanMs, limit: SWEEP_LIMIT }),
    markCarriedOut: (seqs) => markCarriedOut(knex, seqs),
  };
}
