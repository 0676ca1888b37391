import { z } from 'zod';
import { cronOrOff, defineConcern, intFromEnv } from './define.ts';

/** The scheduled jobs: the books audit and retention (one run per tick across processes). */
export const jobSettings = defineConcern({
  name: 'scheduled jobs',
  schema: z.object({
    /**
     * When the books audit runs (pg-boss cron, UTC; audit/): every open ad and trade compared with
     * its contracts, unreported events applied, the rest reported as drift. `off`: never (the test
     * service's default: tests run the audit themselves).
     */
    BOOKS_AUDIT_CRON: cronOrOff('*/5 * * * *'),
    /**
     * Most subjects one phase of a books audit run reads (phases: ad requests, open trades, ad
     * balances, each with its own budget): a flood in one phase cannot starve the others. A phase
     * that stops short keeps a cursor and the next run continues there (audit/README.md).
     */
    BOOKS_AUDIT_PHASE_MAX_ITEMS: intFromEnv(1, 1_000_000).default(1000),
    /**
     * Seconds one phase of a run may spend starting reads; what is under way then finishes. At most
     * 200: the three phases together stay well inside the audit job's 900 s expiry (audit/job.ts).
     */
    BOOKS_AUDIT_PHASE_SECONDS: intFromEnv(1, 200).default(120),
    /** Chain reads one audit phase keeps in flight at once. */
    BOOKS_AUDIT_READ_CONCURRENCY: intFromEnv(1, 64).default(8),
    /**
     * When the retention job runs (pg-boss cron, UTC; retention/): rows past their window are
     * deleted in bounded batches (docs/operations.md "Retention"). `off`: never.
     */
    RETENTION_CRON: cronOrOff('17 3 * * *'),
    /** Days the pushed events of an ended trade (after it ended) and of ads stay for `Last-Event-ID` replay. */
    RETENTION_PUSHED_EVENT_DAYS: intFromEnv(1, 3650).default(30),
    /** Days the webhook delivery log keeps an attempt. */
    RETENTION_WEBHOOK_DELIVERY_DAYS: intFromEnv(1, 3650).default(14),
    /** Days the chain events of an ended trade (after it ended) or a settled ad request stay. */
    RETENTION_CHAIN_EVENT_DAYS: intFromEnv(1, 3650).default(90),
    /** Days a confirmed or expired ad request stays after it was made. */
    RETENTION_AD_REQUEST_DAYS: intFromEnv(1, 3650).default(90),
    /**
     * Days the carried-out follow-ups (`trade_follow_ups`) of an ended trade stay after it ended:
     * what the machine asked for, for debugging the trade. Pending rows and open trades' rows stay.
     */
    RETENTION_FOLLOW_UP_DAYS: intFromEnv(1, 3650).default(30),
    /** Rows one retention delete takes at most (one short transaction each). */
    RETENTION_BATCH_SIZE: intFromEnv(1, 100_000).default(1000),
  }),
});
