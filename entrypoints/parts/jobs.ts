import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { AuditReport } from '../../audit/audit.ts';
import { startAuditJob, type AuditJob } from '../../audit/job.ts';
import type { Config } from '../../config/config.ts';
import { sessionLeaderLock } from '../../db/leader-lock.ts';
import { startRetentionJob, type RetentionJob } from '../../retention/job.ts';
import { runRetention } from '../../retention/retention.ts';
import { tradeGaugeSampler, type TradeGaugeSampler } from '../../trades/observation/gauges.ts';
import { startWebhookDispatcher, type WebhookDispatcher } from '../../webhooks/dispatcher.ts';
import type { ProcessTelemetry } from './telemetry.ts';

/**
 * The scheduled work beside the trade lifecycle, run by the process that runs the jobs (the worker
 * on Temporal, the API on the embedded runner). Each starts once (a second call does nothing),
 * durably on pg-boss or by an advisory lock over `databaseUrl`; `close` stops what was started.
 */
export interface ScheduledJobs {
  /** Delivers users' webhooks (pg-boss jobs in this database: webhooks have no Temporal workflow). */
  startWebhookDelivery(databaseUrl: string): Promise<void>;
  /** Samples the trade gauges every METRICS_SAMPLE_SECONDS; of several processes, the one holding the sampler's lock serves them. */
  startTradeGauges(databaseUrl: string): void;
  /** The books audit's cron job (BOOKS_AUDIT_CRON; nothing when `off`): one run per tick across processes. */
  startAudit(databaseUrl: string): Promise<void>;
  /** The retention job's cron job (RETENTION_CRON; nothing when `off`), beside the audit's. */
  startRetention(databaseUrl: string): Promise<void>;
  close(): Promise<void>;
}

/** The scheduled jobs of a process, none started yet. */
export function scheduledJobs(
  config: Config, knex: Knex, logger: Logger, deps: { telemetry: ProcessTelemetry; runAudit: () => Promise<AuditReport> },
): ScheduledJobs {
  const { telemetry, runAudit } = deps;
  let webhooks: WebhookDispatcher | undefined;
  let gauges: TradeGaugeSampler | undefined;
  let audit: AuditJob | undefined;
  let retention: RetentionJob | undefined;
  return {
    async startWebhookDelivery(databaseUrl) {
      webhooks ??= await startWebhookDispatcher({
        databaseUrl, knex, logger, metrics: telemetry.push,
        settings: {
          timeoutSeconds: config.WEBHOOK_TIMEOUT_SECONDS, publicOnly: config.NODE_ENV === 'production',
          retryBaseSeconds: config.WEBHOOK_RETRY_BASE_SECONDS, retryMaxSeconds: config.WEBHOOK_RETRY_MAX_SECONDS,
          disableAfterFailures: config.WEBHOOK_DISABLE_AFTER_FAILURES, disableAfterSeconds: config.WEBHOOK_DISABLE_AFTER_SECONDS,
          sweepSeconds: config.WEBHOOK_SWEEP_SECONDS,
        },
      });
    },
    startTradeGauges(databaseUrl) {
      gauges ??= tradeGaugeSampler({
        registry: telemetry.registry, knex, logger, intervalMs: telemetry.sampleMs, lock: sessionLeaderLock(databaseUrl, 'relayer:trade-gauges'),
      });
      gauges.start();
    },
    async startAudit(databaseUrl) {
      if (audit || config.BOOKS_AUDIT_CRON === 'off') return;
      audit = await startAuditJob({ databaseUrl, cron: config.BOOKS_AUDIT_CRON, logger, run: runAudit });
    },
    async startRetention(databaseUrl) {
      if (retention || config.RETENTION_CRON === 'off') return;
      const policy = {
        pushedEventDays: config.RETENTION_PUSHED_EVENT_DAYS, webhookDeliveryDays: config.RETENTION_WEBHOOK_DELIVERY_DAYS,
        chainEventDays: config.RETENTION_CHAIN_EVENT_DAYS, adRequestDays: config.RETENTION_AD_REQUEST_DAYS,
        followUpDays: config.RETENTION_FOLLOW_UP_DAYS, batchSize: config.RETENTION_BATCH_SIZE,
      };
      retention = await startRetentionJob({
        databaseUrl, cron: config.RETENTION_CRON, logger, run: () => telemetry.retention.track(() => runRetention(knex, policy)),
      });
    },
    async close() {
      await retention?.stop();
      await gauges?.stop();
      await audit?.stop();
      await webhooks?.close();
    },
  };
}
