import { Counter, Gauge, type Registry } from 'prom-client';
import type { AuditPhase, AuditReport, DriftKind } from './audit.ts';

const DRIFT_KINDS: DriftKind[] = ['ad-balance', 'request-unexplained', 'trade-state', 'repair-failed'];
const PHASES: AuditPhase[] = ['requests', 'trades', 'ad-balances'];

/** The audit's metrics, registered on `registry` (never prom-client's global one). */
export interface AuditMetrics {
  /** Call as a run starts: from then on this process exports when each phase last finished a sweep. */
  started(): void;
  /** Feed each finished run's report. */
  observe(report: AuditReport): void;
}

/**
 * `relayer_audit_drift{kind}`: what the last run found the books and the chains disagreeing on and
 * could not explain (the BooksDriftFromChains alert); `relayer_audit_repairs_total{kind}`: verified
 * events nobody had reported, applied by the audit; `relayer_audit_requests_expired_total`: lapsed
 * requests the chain says never ran, expired by the audit; `relayer_audit_unchecked`: subjects on
 * chains the audit cannot read yet; `relayer_audit_last_run_timestamp_seconds` (the
 * BooksAuditNotRunning alert) and `relayer_audit_last_run_duration_seconds`; per phase,
 * `relayer_audit_items_left{phase}` (subjects the sweep has yet to reach), `relayer_audit_truncated_total{phase}`
 * (runs that stopped short on their budget) and `relayer_audit_sweep_completed_timestamp_seconds{phase}`
 * (when a run last reached the end of the phase's sweep: the BooksAuditFallingBehind alert).
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
  const expired = new Counter({
    name: 'relayer_audit_requests_expired_total',
    help: 'Ad requests past their deadline and grace that the chain says never ran, expired by the audit (holds given back)',
    registers: [registry],
  });
  const unchecked = new Gauge({
    name: 'relayer_audit_unchecked',
    help: 'Ads, requests and trades the last audit could not read on their chain',
    registers: [registry],
  });
  const lastRun = new Gauge({ name: 'relayer_audit_last_run_timestamp_seconds', help: 'When the last audit finished (unix seconds)', registers: [registry] });
  const duration = new Gauge({ name: 'relayer_audit_last_run_duration_seconds', help: 'How long the last finished audit run took', registers: [registry] });
  const left = new Gauge({
    name: 'relayer_audit_items_left', help: 'Subjects of each audit phase\'s sweep after where the last run stopped (0: it reached the end)',
    labelNames: ['phase'] as const, registers: [registry],
  });
  const truncated = new Counter({
    name: 'relayer_audit_truncated_total', help: 'Audit runs whose phase stopped on its budget (items or seconds) before the end of its sweep',
    labelNames: ['phase'] as const, registers: [registry],
  });
  const swept = new Gauge({
    name: 'relayer_audit_sweep_completed_timestamp_seconds',
    help: 'When an audit run last reached the end of the phase\'s sweep (unix seconds; the first run\'s start until then)',
    labelNames: ['phase'] as const, registers: [registry],
  });
  let running = false;
  const nowSeconds = () => Math.floor(Date.now() / 1000);
  return {
    started() {
      if (running) return;
      // Set once, when this process first runs the audit: a sweep that never ends ages from there.
      running = true;
      for (const phase of PHASES) swept.set({ phase }, nowSeconds());
    },
    observe(report) {
      for (const kind of DRIFT_KINDS) drift.set({ kind }, report.drifts.filter((d) => d.kind === kind).length);
      for (const repair of report.repairs) repairs.inc({ kind: repair.kind });
      expired.inc(report.expired.length);
      unchecked.set(report.unchecked);
      for (const phase of PHASES) {
        const { left: remaining, truncated: stopped } = report.phases[phase];
        left.set({ phase }, remaining);
        if (stopped) truncated.inc({ phase });
        else swept.set({ phase }, nowSeconds());
      }
      duration.set(report.durationMs / 1000);
      lastRun.set(nowSeconds());
    },
  };
}
