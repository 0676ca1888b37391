import type { Knex } from 'knex';
import { Counter, Histogram, type Registry } from 'prom-client';
import { secondsSinceDeposit } from '../../db/repositories/trade-stats.ts';
import type { TimerEvent, TradeEvent } from '../lifecycle/index.ts';
import { outcomeOf, TRADE_OUTCOMES } from '../lifecycle/outcomes.ts';
import type { AppliedEvent } from '../orchestrator.ts';
import type { StartedBy } from '../start-reconciler.ts';

export { OUTCOME_CAUSES, TRADE_OUTCOMES } from '../lifecycle/outcomes.ts';

/**
 * The trade lifecycle's event-driven metrics: applied lifecycle events by type, how deposited
 * trades ended (the settlement SLO), deposit-confirm-to-proof-ready seconds; the faults: lifecycle
 * starts by who made them and their outcome, timers the embedded runner armed again. None reads
 * the database at scrape time; the gauges read from it (trades by status, stuck trades, the start
 * outbox) are trades/observation/gauges.ts's, sampled by one process.
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

/** Registers the metrics on `registry`; `knex` only times a proof from its recorded deposit (never at scrape time). */
export function tradeMetrics(registry: Registry, knex: Knex): TradeMetrics {
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
  // From the first scrape at 0: the proof SLI counts over deposits (increase() of this series), and a
  // series born at 1 would lose its first deposit.
  events.inc({ event: 'DEPOSIT_CONFIRMED' }, 0);
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
  const outcomes = new Counter({
    name: 'relayer_trade_outcomes_total',
    help: 'Deposited trades that ended, by outcome: settled (both unlocks confirmed), expired_unlocked (the lock ' +
      'window closed with no lock), expired_released (the lock released unpaid); and cause of an expiry: service ' +
      '(the proof was not ready), counterparty (it was), none (settled)',
    labelNames: ['outcome', 'cause'] as const,
    registers: [registry],
  });
  outcomes.inc({ outcome: 'settled', cause: 'none' }, 0);
  for (const outcome of TRADE_OUTCOMES.slice(1)) {
    for (const cause of ['service', 'counterparty'] as const) outcomes.inc({ outcome, cause }, 0);
  }
  return {
    startAttempted(by, outcome) {
      starts.inc({ by, outcome });
    },
    timerRearmed(timer) {
      rearmed.inc({ timer });
    },
    async observe(tradeId, applied, event) {
      if (applied.duplicate || applied.stale) return;
      const type = (applied.appliedAs ?? event).type;
      events.inc({ event: type });
      const ended = outcomeOf(type, applied.state);
      if (ended) outcomes.inc(ended);
      if (event.type !== 'PROOF_READY') return;
      const seconds = applied.depositToProofSeconds ?? await secondsSinceDeposit(knex, tradeId);
      if (seconds !== undefined) depositToProof.observe(seconds);
    },
  };
}

