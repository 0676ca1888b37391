import type { Knex } from 'knex';
import {
  deleteAdRequestsBatch, deleteChainEventsBatch, deleteFollowUpsBatch, deletePushedEventsBatch, deleteWebhookDeliveriesBatch, type RetentionCutoffs,
} from '../db/repositories/retention.ts';

/**
 * The retention policy (docs/operations.md "Retention"): how long each growing table keeps a
 * row after it can no longer change. Days are counted from the row's own time (pushed and chain
 * events and follow-ups: also from the end of their trade, since an open trade keeps everything).
 */
export interface RetentionPolicy {
  /** `Last-Event-ID` replay (SSE) and the user feed: events of ended trades and of ads, this many days. */
  pushedEventDays: number;
  /** The webhook delivery log (GET .../deliveries), this many days. */
  webhookDeliveryDays: number;
  /** Chain events of ended trades and settled ad requests, this many days. */
  chainEventDays: number;
  /** Confirmed and expired ad requests, this many days after they were made. */
  adRequestDays: number;
  /**
   * Carried-out rows of the follow-ups outbox (`trade_follow_ups`) of ended trades, this many days
   * after the trade ended: what the machine asked the orchestrator for, kept while someone may
   * still debug the trade. Pending rows and open trades' rows always stay.
   */
  followUpDays: number;
  /** Rows one delete statement takes at most (each batch is its own short transaction). */
  batchSize: number;
}

/** The tables a run deletes from, in the order it runs (chain events before the ad requests they answer). */
export const RETAINED_TABLES = ['pushed_events', 'webhook_deliveries', 'chain_events', 'ad_requests', 'trade_follow_ups'] as const;
export type RetainedTable = typeof RETAINED_TABLES[number];

/** What one run deleted, per table, and how many batches it took. */
export interface RetentionReport {
  deleted: Record<RetainedTable, number>;
  batches: number;
  durationMs: number;
}

const DAY_MS = 86_400_000;

/** The cut-offs of a run at `now`. */
export function cutoffsOf(policy: RetentionPolicy, now: Date): RetentionCutoffs {
  const before = (days: number) => new Date(now.getTime() - days * DAY_MS);
  return {
    pushedEvents: before(policy.pushedEventDays),
    webhookDeliveries: before(policy.webhookDeliveryDays),
    chainEvents: before(policy.chainEventDays),
    adRequests: before(policy.adRequestDays),
    followUps: before(policy.followUpDays),
  };
}

/**
 * Deletes, table by table, every row the policy lets go, in batches of at most `batchSize` rows
 * until a batch comes back short. What an open trade or an unsettled request needs is never
 * deleted (the guards are in the SQL, db/repositories/retention.ts). Trades, ads, merkle nodes and
 * user event counters are never deleted here (README). Idempotent: a second run finds nothing.
 */
export async function runRetention(knex: Knex, policy: RetentionPolicy, now: Date = new Date()): Promise<RetentionReport> {
  const started = Date.now();
  const cutoffs = cutoffsOf(policy, now);
  const steps: Record<RetainedTable, (limit: number) => Promise<number>> = {
    pushed_events: (limit) => deletePushedEventsBatch(knex, cutoffs.pushedEvents, limit),
    webhook_deliveries: (limit) => deleteWebhookDeliveriesBatch(knex, cutoffs.webhookDeliveries, limit),
    chain_events: (limit) => deleteChainEventsBatch(knex, cutoffs.chainEvents, limit),
    ad_requests: (limit) => deleteAdRequestsBatch(knex, cutoffs.adRequests, limit),
    trade_follow_ups: (limit) => deleteFollowUpsBatch(knex, cutoffs.followUps, limit),
  };
  const deleted = { pushed_events: 0, webhook_deliveries: 0, chain_events: 0, ad_requests: 0, trade_follow_ups: 0 };
  let batches = 0;
  for (const table of RETAINED_TABLES) {
    for (;;) {
      const count = await steps[table](policy.batchSize);
      batches += 1;
      deleted[table] += count;
      if (count < policy.batchSize) break;
    }
  }
  return { deleted, batches, durationMs: Date.now() - started };
}
