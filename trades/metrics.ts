import type { Knex } from 'knex';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { oldestOpenTradeAges, stuckTradeCounts } from '../db/repositories/trade-ages.ts';
import { tradeStartBacklog } from '../db/repositories/trade-starts.ts';
import { secondsSinceDeposit, tradeCountsByStatus } from '../db/repositories/trade-stats.ts';
import type { TimerEvent, TradeEvent } from './lifecycle.ts';
import type { AppliedEvent } from './orchestrator.ts';
import type { StartedBy } from './start-reconciler.ts';

/** A PENDING or DEPOSITED trade this long past the timer that should have moved it counts as stuck. */
export const STUCK_GRACE_SECONDS = 120;

/**
 * The trade lifecycle's metrics: trades by status and the age of the oldest open trade per status
 * (both read at scrape time), applied lifecycle events by type, and deposit-confirm-to-proof-ready
 * seconds; the faults: lifecycle starts by who made them and their outcome, the start outbox's
 * backlog and lag, timers the embedded runner armed again, and trades stuck past a timer (read at
 * scrape time).
 */
export interface TradeMetrics {
  /**
   * Feed every applied event (the orchestrator's `onApplied`). A proof made ready is timed from its
   * deposit's record in the database, so the figure is right whichever process saw the deposit.
   */
  observe(tradeId: string, applied: AppliedEvent, event: TradeEvent): Promise<void>;
  /** Feed every lifecycle start attempt (trades/start-reconciler.ts `onAttempt`). */
  startAttempted(by: StartedBy, outcome: 'started' | 'failed'): void;
  /** Feed every timer job the embedded runner armed again after pg-boss gave it up (`onTimerRearmed`). */
  timerRearmed(event: TimerEvent): void;
}

/** Registers the metrics on `registry`; the status gauge counts trades in `knex` whenever Prometheus scrapes. */
export function tradeMetrics(registry: Registry, knex: Knex): TradeMetrics {
  new Gauge({
    name: 'relayer_trades',
    help: 'Trades by status',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const { status, count } of await tradeCountsByStatus(knex)) this.set({ status }, count);
    },
  });
  new Gauge({
    name: 'relayer_trades_oldest_in_status_seconds',
    help: 'Seconds the longest-waiting open trade has been in its status (PENDING, DEPOSITED, LOCKED; 0 when none)',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      for (const [status, age] of Object.entries(await oldestOpenTradeAges(knex))) this.set({ status }, age);
    },
  });
  const depositToProof = new Histogram({
    name: 'relayer_trade_deposit_to_proof_seconds',
    help: 'From a verified deposit to its proof being ready',
    buckets: [0.25, 0.5, 1, 1.5, 2, 3, 5, 10, 30, 60, 180],
    registers: [registry],
  });
  const events = new Counter({
    name: 'relayer_trade_events_total',
    help: 'Lifecycle events applied to trades (the flow between statuses), by event type; repeats not counted',
    labelNames: ['event'] as const,
    registers: [registry],
  });
  const starts = new Counter({
    name: 'relayer_trade_starts_total',
    help: "Attempts to start a trade's lifecycle, by who made it (request, confirm, reconciler) and outcome (started, failed)",
    labelNames: ['by', 'outcome'] as const,
    registers: [registry],
  });
  // Every series exists from the first scrape, at 0: a rate() over a series that was never written is
  // no data, so an alert on failed reconciler starts could never be told apart from a missing metric.
  for (const by of ['request', 'confirm', 'reconciler'] as const) {
    for (const outcome of ['started', 'failed'] as const) starts.inc({ by, outcome }, 0);
  }
  const rearmed = new Counter({
    name: 'relayer_trade_timers_rearmed_total',
    help: 'Timer jobs of open trades the embedded runner armed again after pg-boss gave them up (retries spent in an outage) or cancelled them, by timer',
    labelNames: ['timer'] as const,
    registers: [registry],
  });
  for (const timer of ['RESERVATION_EXPIRED', 'LOCK_WINDOW_CLOSED'] as const) rearmed.inc({ timer }, 0);
  const backlog = () => tradeStartBacklog(knex);
  new Gauge({
    name: 'relayer_trade_start_outbox_pending',
    help: 'Trades reserved whose lifecycle the orchestrator has not confirmed starting (rows in trade_starts)',
    registers: [registry],
    async collect() {
      this.set((await backlog()).pending);
    },
  });
  new Gauge({
    name: 'relayer_trade_start_outbox_lag_seconds',
    help: 'Age of the oldest pending trade start (0 when none): how far the reconciler is behind',
    registers: [registry],
    async collect() {
      this.set((await backlog()).oldestSeconds);
    },
  });
  new Gauge({
    name: 'relayer_trades_stuck',
    help: `Open trades a timer should have moved ${STUCK_GRACE_SECONDS} s ago: PENDING past the reservation's expiry, DEPOSITED past the lock deadline`,
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      for (const [status, n] of Object.entries(await stuckTradeCounts(knex, STUCK_GRACE_SECONDS))) this.set({ status }, n);
    },
  });
  return {
    startAttempted(by, outcome) {
      starts.inc({ by, outcome });
    },
    timerRearmed(timer) {
      rearmed.inc({ timer });
    },
    async observe(tradeId, applied, event) {
      if (applied.duplicate || applied.stale) return;
      events.inc({ event: (applied.appliedAs ?? event).type });
      if (event.type !== 'PROOF_READY') return;
      const seconds = await secondsSinceDeposit(knex, tradeId);
      if (seconds !== undefined) depositToProof.observe(seconds);
    },
  };
}
