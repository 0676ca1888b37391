import { Counter, Gauge, type Registry } from 'prom-client';
import { RETAINED_TABLES, type RetentionReport } from './retention.ts';

/** The retention job's metrics, registered on `registry` (never prom-client's global one). */
export interface RetentionMetrics {
  observe(report: RetentionReport): void;
  /**
   * Runs one retention run, counting it by result (`relayer_retention_runs_total{result="ok"|"failed"}`)
   * and observing its report when it succeeds; a failure is counted and rethrown (pg-boss retries it).
   */
  track(run: () => Promise<RetentionReport>): Promise<RetentionReport>;
}

/**
 * `relayer_retention_deleted_rows_total{table}`: rows the retention job deleted;
 * `relayer_retention_last_run_timestamp_seconds`: when a run last finished (an alert on its age
 * catches a job that stopped running); `relayer_retention_last_run_duration_seconds` (a run nearing
 * its job's one-hour expiry falls behind); `relayer_retention_runs_total{result}` (runs that
 * succeeded or failed: the RetentionJobFailing alert).
 */
export function retentionMetrics(registry: Registry): RetentionMetrics {
  const deleted = new Counter({
    name: 'relayer_retention_deleted_rows_total', help: 'Rows deleted by the retention job, by table',
    labelNames: ['table'] as const, registers: [registry],
  });
  for (const table of RETAINED_TABLES) deleted.inc({ table }, 0);
  const lastRun = new Gauge({ name: 'relayer_retention_last_run_timestamp_seconds', help: 'When the last retention run finished (unix seconds)', registers: [registry] });
  const duration = new Gauge({ name: 'relayer_retention_last_run_duration_seconds', help: 'How long the last retention run took', registers: [registry] });
  const runs = new Counter({
    name: 'relayer_retention_runs_total', help: 'Retention runs by result (ok, failed)',
    labelNames: ['result'] as const, registers: [registry],
  });
  for (const result of ['ok', 'failed']) runs.inc({ result }, 0);
  const observe = (report: RetentionReport) => {
    for (const table of RETAINED_TABLES) deleted.inc({ table }, report.deleted[table]);
    lastRun.set(Date.now() / 1000);
    duration.set(report.durationMs / 1000);
  };
  return {
    observe,
    async track(run) {
      let report: RetentionReport;
      try {
        report = await run();
      } catch (error) {
        runs.inc({ result: 'failed' });
        throw error;
      }
      runs.inc({ result: 'ok' });
      observe(report);
      return report;
    },
  };
}
