import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { retentionMetrics } from './metrics.ts';
import { RETAINED_TABLES, type RetentionReport } from './retention.ts';

const report = (rows: number): RetentionReport => ({
  deleted: Object.fromEntries(RETAINED_TABLES.map((t) => [t, rows])) as RetentionReport['deleted'], durationMs: 1500,
} as RetentionReport);

describe('retention metrics', () => {
  it('count runs by result (what RetentionJobFailing reads), rethrow a failure, and stamp only a success', async () => {
    const registry = new Registry();
    const metrics = retentionMetrics(registry);
    const text = () => registry.metrics();
    expect(await text()).toMatch(/relayer_retention_runs_total\{result="failed"\} 0/);

    await expect(metrics.track(async () => { throw new Error('lock timeout'); })).rejects.toThrow('lock timeout');
    expect(await text()).toMatch(/relayer_retention_runs_total\{result="failed"\} 1/);
    expect(await text()).toMatch(/^relayer_retention_last_run_timestamp_seconds 0$/m);

    await metrics.track(async () => report(2));
    const after = await text();
    expect(after).toMatch(/relayer_retention_runs_total\{result="ok"\} 1/);
    expect(after).toMatch(new RegExp(`relayer_retention_deleted_rows_total\\{table="${RETAINED_TABLES[0]}"\\} 2`));
    expect(after).toMatch(/relayer_retention_last_run_duration_seconds 1.5/);
    expect(Number(/^relayer_retention_last_run_timestamp_seconds (\S+)/m.exec(after)![1])).toBeGreaterThan(Date.now() / 1000 - 60);
  });
});
