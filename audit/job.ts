import { startJobQueues } from '../db/job-queues.ts';
import type { Logger } from 'pino';
import type { AuditReport } from './audit.ts';

const QUEUE = 'books-audit';

export interface AuditJob {
  stop(): Promise<void>;
}

/**
 * Runs `run` as a pg-boss job on `cron` (UTC) in the service's PostgreSQL: one run per tick across
 * every process that starts the job (pg-boss schedules are kept once per queue), retried by
 * pg-boss on failure, logged with what it repaired, expired and what drifted, and how far each
 * phase got. Also runs once at start. The job expires after 900 s: each phase's budget
 * (BOOKS_AUDIT_PHASE_SECONDS, at most 200) keeps a run well inside it.
 */
export async function startAuditJob(options: {
  databaseUrl: string; cron: string; logger: Logger; run: () => Promise<AuditReport>;
}): Promise<AuditJob> {
  const { logger } = options;
  const boss = await startJobQueues({
    databaseUrl: options.databaseUrl, max: 2, logger, label: 'books audit',
    queues: { [QUEUE]: { retryLimit: 3, retryDelay: 30, expireInSeconds: 900, policy: 'singleton' } },
  });
  await boss.work(QUEUE, { pollingIntervalSeconds: 5 }, async () => {
    const report = await options.run();
    const summary = {
      ads: report.ads, trades: report.trades, unchecked: report.unchecked, repairs: report.repairs.length, drifts: report.drifts.length,
      expired: report.expired.length, phases: report.phases, durationMs: report.durationMs,
    };
    if (report.drifts.length > 0) logger.error({ ...summary, drift: report.drifts }, 'books audit: the books and the chains disagree');
    else logger.info({ ...summary, repaired: report.repairs }, 'books audit: the books agree with the chains');
  });
  await boss.schedule(QUEUE, options.cron);
  await boss.send(QUEUE, {}, { singletonKey: 'start' });
  return {
    async stop() {
      await boss.stop({ graceful: true, wait: true });
    },
  };
}
