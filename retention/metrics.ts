import { Counter, Gauge, type Registry } from 'prom-client';
import { RETAINED_TABLES, type RetentionReport } from './retention.ts';

/** The retention job's metrics, registered on `registry` (never prom-client's global one). */
export interface RetentionMetrics {
  observe(report: RetentionReport): void;
}

/**
 * `relayer_retention_deleted_rows_total{table}`: rows the retention job deleted;
 * `relayer_retention_last_run_timestamp_seconds`: when a run last finished (an alert on its age
 * catches a job that stopped running); `relayer_retention_last_run_duration_seconds`.
 */
export function retentionMetrics(registry: Registry): RetentionMetrics {
  const deleted = new Counter({
    name: 'relayer_retention_deleted_rows_total', help: 'Rows deleted by the retention job, by table',
    labelNames: ['table'] as const, registers: [registry],
  });
  for (const table of RETAINED_TABLES) deleted.inc({ table }, 0);
  const lastRun = new Gauge({ name: 'relayer_retention_last_run_timestamp_seconds', help: 'When the last retention run finished (unix seconds)', registers: [registry] });
  const duration = new Gauge({ name: 'relayer_retention_last_run_duration_seconds', help: 'How long the last retention run took', registers: [registry] });
  return {
    observe(report) {
      for (const table of RETAINED_TABLES) deleted.inc({ table }, report.deleted[table]);
      lastRun.set(Date.now() / 1000);
      duration.set(report.durationMs / 1000);
    },
  };
}
