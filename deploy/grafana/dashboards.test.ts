import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { runTool } from '../../test/support/deploy-tools.ts';
import { dashboardFile, dashboardText } from './build.ts';
import { dashboards } from './dashboards.ts';
import { dashboardQueries, toGrafanaJson } from './model.ts';

describe('Grafana dashboards', () => {
  it('the committed JSON is what the typed definitions generate (npm run dashboards:build)', () => {
    for (const dashboard of dashboards) expect(readFileSync(dashboardFile(dashboard.uid), 'utf8'), dashboard.uid).toBe(dashboardText(dashboard));
    expect(readdirSync(new URL('./dashboards/', import.meta.url)).sort()).toEqual(dashboards.map((d) => `${d.uid}.json`).sort());
  });

  it('every query is valid PromQL (promtool parses each as a recording rule)', () => {
    const queries = dashboards.flatMap(dashboardQueries);
    const dir = mkdtempSync(path.join(tmpdir(), 'dashboards-promql-'));
    try {
      const rules = { groups: [{ name: 'dashboards', rules: queries.map((q, i) => ({ record: `dashboard:query_${i}`, expr: q.expr })) }] };
      writeFileSync(path.join(dir, 'queries.yml'), stringify(rules));
      const { status, output } = runTool('promtool', ['check', 'rules', 'queries.yml'], dir);
      expect(output).toContain(`SUCCESS: ${queries.length} rules found`);
      expect(status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('shows every signal deploy/README.md promises', () => {
    const exprs = dashboards.flatMap(dashboardQueries).map((q) => q.expr).join('\n');
    for (const metric of [
      'http_request_duration_seconds_count', 'http_request_duration_seconds_bucket', 'relayer_trades', 'relayer_trade_events_total',
      'relayer_trade_deposit_to_proof_seconds_bucket', 'relayer_prover_witness_duration_seconds_bucket', 'relayer_prover_prove_duration_seconds_bucket',
      'relayer_prover_verify_duration_seconds_bucket', 'relayer_prover_proofs_total', 'relayer_prover_queue_depth', 'relayer_prover_busy_workers',
      'temporal_activity_schedule_to_start_latency_bucket{namespace=~".*", job=~"relayer-api|relayer-worker|relayer-prover", task_queue="proofs"}',
      'relayer_proof_backlog_tasks', 'relayer_proof_backlog_oldest_seconds', 'relayer_db_up', 'relayer_trade_gauges_age_seconds',
      'relayer_trades_awaiting_proof_oldest_seconds', 'relayer_trade_outcomes_total', 'relayer:slo_api_availability:error_ratio_rate1h',
      'relayer:slo_proof_latency:error_ratio_rate1h', 'relayer:slo_settlement:error_ratio_rate1h',
      'relayer_trade_starts_total', 'relayer_trade_start_outbox_pending', 'relayer_trade_start_outbox_lag_seconds', 'relayer_trades_stuck',
    ]) expect(exprs, metric).toContain(metric);
  });

  it('every series a panel reads is scoped by the namespace and job variables (recording rules, already by namespace, by namespace)', () => {
    for (const dashboard of dashboards) {
      const variables = (toGrafanaJson(dashboard) as any).templating.list;
      expect(variables.map((v: any) => [v.name, v.allValue])).toEqual([['namespace', '.*'], ['job', 'relayer-api|relayer-worker|relayer-prover']]);
      for (const { where, raw } of dashboardQueries(dashboard)) {
        const selectors = [...raw.matchAll(/\b([a-z_:][a-z0-9_:]*)\{([^}]*)\}/g)];
        const bare = [...raw.replace(/\{[^}]*\}/g, '{}').matchAll(/\b([a-z_][a-z0-9_]*_(total|seconds|count|bucket|sum|tasks|depth|workers|up)|relayer_trades|relayer:[a-z_:0-9]+)(?![\w:{])/g)];
        expect(bare.map((m) => m[0]), `${where}: a metric without a selector`).toEqual([]);
        expect(selectors.length, where).toBeGreaterThan(0);
        for (const [, metric, labels] of selectors) {
          expect(labels, `${where}: ${metric}`).toContain('namespace=~"$namespace"');
          if (!metric!.startsWith('relayer:')) expect(labels, `${where}: ${metric}`).toContain('job=~"$job"');
        }
      }
    }
  });
});
