import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../../config/config.ts';
import { defaultProverPoolSize } from '../../prover/pool.ts';
import { tracedActivities } from '../../telemetry/activities.ts';
import { followUpOutbox } from '../../trades/follow-up-outbox.ts';
import type { TradeMetrics } from '../../trades/observation/metrics.ts';
import type { Orchestrator, TradeActivities } from '../../trades/orchestrator.ts';
import { openRestorableTrade, resumableTrades } from '../../trades/resume.ts';
import { startEmbeddedOrchestrator } from '../../workflows/embedded/orchestrator.ts';
import { createTemporalOrchestrator, type TemporalOrchestrator } from '../../workflows/temporal/client.ts';
import { temporalConnectOptions } from '../../workflows/temporal/connection-options.ts';

/** Where a process keeps its orchestrator once started: what was built before it (use cases, the start reconciler) asks on use. */
export interface OrchestratorSlot {
  /** The orchestrator; throws until one was set. */
  get(): Orchestrator;
  /** Whether one was set. */
  started(): boolean;
  set(orchestrator: Orchestrator): void;
  /** Closes the orchestrator if one was set. */
  close(): Promise<void>;
}

/** An empty slot for the orchestrator a process starts later. */
export function orchestratorSlot(): OrchestratorSlot {
  let current: Orchestrator | undefined;
  return {
    get() {
      if (!current) throw new Error('the orchestrator is not started');
      return current;
    },
    started: () => current !== undefined,
    set(orchestrator) {
      current = orchestrator;
    },
    async close() {
      await current?.close();
    },
  };
}

/**
 * A Temporal client (TEMPORAL_ADDRESS) that signals each trade's workflow with the follow-ups the
 * use cases commit. With `sweep` (the worker), it also hands over, every
 * TRADE_START_RECONCILE_SECONDS, the follow-ups an API process left pending (it stopped, or
 * Temporal was unreachable, after the commit). A start or delivery that finds a trade's workflow
 * closed while the database holds the trade open resumes it in a new run.
 */
export async function temporalOrchestrator(config: Config, knex: Knex, logger: Logger, options: { sweep: boolean }): Promise<TemporalOrchestrator> {
  const orchestrator = await createTemporalOrchestrator({
    ...temporalConnectOptions(config),
    outbox: followUpOutbox(knex),
    openTrade: (tradeId) => openRestorableTrade(knex, tradeId),
    sweepIntervalMs: options.sweep ? config.TRADE_START_RECONCILE_SECONDS * 1000 : 0,
    onSweepFailed: (error) => logger.warn({ err: error }, 'handing pending follow-ups to their workflows failed; retrying next interval'),
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    proofsTaskQueue: config.TEMPORAL_PROOFS_TASK_QUEUE,
  });
  logger.info({ address: config.TEMPORAL_ADDRESS, namespace: config.TEMPORAL_NAMESPACE }, 'trades run on Temporal');
  return orchestrator;
}

/**
 * The embedded runner (TEMPORAL_ADDRESS unset): the follow-ups as pg-boss jobs over `databaseUrl`,
 * proofs on this process's pool (PROVER_POOL_SIZE at once), open trades re-armed on start and every
 * EMBEDDED_TIMER_RESUME_SECONDS.
 */
export function embeddedOrchestrator(
  config: Config, knex: Knex, logger: Logger, deps: { databaseUrl: string; activities: TradeActivities; metrics: TradeMetrics },
): Promise<Orchestrator> {
  return startEmbeddedOrchestrator({
    databaseUrl: deps.databaseUrl,
    activities: tracedActivities(deps.activities),
    outbox: followUpOutbox(knex),
    logger,
    onApplied: deps.metrics.observe,
    onTimerRearmed: deps.metrics.timerRearmed,
    proveConcurrency: config.PROVER_POOL_SIZE ?? defaultProverPoolSize(),
    resumeIntervalMs: config.EMBEDDED_TIMER_RESUME_SECONDS * 1000,
    openTrades: () => resumableTrades(knex),
  });
}
