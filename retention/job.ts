import type { Logger } from 'pino';
import { startJobQueues } from '../db/job-queues.ts';
import type { RetentionReport } from './retention.ts';

const QUEUE = 'retention';

export interface RetentionJob {
  stop(): Promise<void>;
}

/**
 * Runs `run` as a pg-boss job on `cron` (UTC), the way the books audit runs (audit/job.ts): the
 * schedule is kept once per queue and the queue is a singleton, so one run per tick across every
 * process that starts the job, whichever orchestrator (the embedded runner, or the Temporal
 * workers). Retried by pg-boss on failure; each run is logged with what it deleted.
 */
export async function startRetentionJob(options: {
  databaseUrl: string; cron: string; logger: Logger; run: () => Promise<RetentionReport>;
}): Promise<RetentionJob> {
  const { logger } = options;
  const boss = await startJobQueues({
    databaseUrl: options.databaseUrl, max: 2, logger, label: 'retention',
    queues: { [QUEUE]: { retryLimit: 3, retryDelay: 60, expireInSeconds: 3600, policy: 'singleton' } },
  });
  await boss.work(QUEUE, { pollingIntervalSeconds: 30 }, async () => {
    const report = await options.run();
    logger.info(report, 'retention: rows past their window deleted');
  });
  await boss.schedule(QUEUE, options.cron);
  return {
    async stop() {
      await boss.stop({ graceful: true, wait: true });
    },
  };
}
