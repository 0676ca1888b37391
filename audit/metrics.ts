import { Counter, Gauge, type Registry } from 'prom-client';
import type { AuditReport, DriftKind } from './audit.ts';

const DRIFT_KINDS: DriftKind[] = ['ad-balance', 'request-unexplained', 'trade-state', 'repair-failed'];

/** The audit's metrics, registered on `registry` (never prom-client's global one). */
export interface AuditMetrics {
  /** Feed each finished run's report. */
  observe(report: AuditReport): void;
}

/**
 * `relayer_audit_drift{kind}`: what the last run found the books and the chains disagreeing on and
 * could not explain (the BooksDriftFromChains alert); `relayer_audit_repairs_total{kind}`: verified
 * events nobody had reported, applied by the audit; `relayer_audit_unchecked`: subjects on chains
 * the audit cannot read yet; `relayer_audit_last_run_timestamp_seconds` (the AuditNotRunning alert).
 */
export function auditMetrics(registry: Registry): AuditMetrics {
  const drift = new Gauge({
    name: 'relayer_audit_drift', help: 'Disagreements between the books and the chains the last audit could not explain, by kind',
    labelNames: ['kind'] as const, registers: [registry],
  });
  for (const kind of DRIFT_KINDS) drift.set({ kind }, 0);
  const repairs = new Counter({
    name: 'relayer_audit_repairs_total', help: 'Verified on-chain events nobody had reported, applied by the audit (ad-request, trade)',
    labelNames: ['kind'] as const, registers: [registry],
  });
  const unchecked = new Gauge({ name: 'relayer_audit_unchecked', help: 'Ads, requests and trades the last audit could not read on their chain', registers: [registry] });
  const lastRun = new Gauge({ name: 'relayer_audit_last_run_timestamp_seconds', help: 'When the last audit finished (unix seconds)', registers: [registry] });
  return {
    observe(report) {
      for (const kind of DRIFT_KINDS) drift.set({ kind }, report.drifts.filter((d) => d.kind === kind).length);
      for (const repair of report.repairs) repairs.inc({ kind: repair.kind });
      unchecked.set(report.unchecked);
      lastRun.set(Math.floor(Date.now() / 1000));
    },
  };
}
