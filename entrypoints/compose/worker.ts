import { Connection } from '@temporalio/client';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../../config/config.ts';
import { MerkleTreeStore } from '../../prover/merkle/store.ts';
import type { ProverPool } from '../../prover/pool.ts';
import type { TradeActivities } from '../../trades/orchestrator.ts';
import type { TradeStarts } from '../../trades/start-reconciler.ts';
import { registerTradeSearchAttributes } from '../../workflows/temporal/client.ts';
import { temporalConnectOptions } from '../../workflows/temporal/connection-options.ts';
import { startProofBacklogSampler, type ProofBacklogSampler } from '../../workflows/temporal/proof-backlog.ts';
import { startLifecycleWorker, type RunningWorker, type WorkerConnectionOptions } from '../../workflows/temporal/worker.ts';
import { booksAudit } from '../parts/audit.ts';
import { chainReaders, relayerSigners } from '../parts/chains.ts';
import { keeperPart } from '../parts/keeper.ts';
import { scheduledJobs, type ScheduledJobs } from '../parts/jobs.ts';
import { orchestratorSlot, temporalOrchestrator, type OrchestratorSlot } from '../parts/orchestrator.ts';
import { tradeActivities } from '../parts/proving.ts';
import { startTelemetry, type ProcessTelemetry } from '../parts/telemetry.ts';
import { once, tradeStarts, tradesUseCase } from '../parts/use-cases.ts';
import type { TemporalParts } from '../temporal-process.ts';

/** Proofs run on the prover processes (queue `proofs`): the worker's activities never reach for a pool. */
const NO_PROVER = (): ProverPool => {
  throw new Error('the worker process does not prove: proofs run on the prover process (queue proofs)');
};

/**
 * What the `worker` process holds (queue `trade-lifecycle`): no relayer secret (it signs no request:
 * its relayer signer refuses every call; the keeper's keys pay gas only), the chain readers, the trade workflows and their light
 * activities, a Temporal client that sweeps the follow-ups outbox, the start reconciler, and the
 * scheduled jobs (webhook delivery, trade gauges, the proofs backlog, the books audit, retention).
 * The trades use case is built only when the audit finds a transaction nobody reported.
 */
export function composeWorker(config: Config, logger: Logger, knex: Knex): TemporalParts {
  const telemetry = startTelemetry(config, 'worker', knex);
  const signers = relayerSigners(config, 'worker');
  const chains = chainReaders(knex, { registry: telemetry.registry, logger, config });
  const activities = tradeActivities(config, knex, chains, new MerkleTreeStore(knex), NO_PROVER);
  const orchestrator = orchestratorSlot();
  const starts = tradeStarts(config, knex, logger, orchestrator.get, telemetry.trades);
  const trades = once(() => tradesUseCase(config, knex, logger, {
    chains, signers, activities, orchestrator: orchestrator.get, starts, metrics: telemetry.trades,
  }));
  const jobs = scheduledJobs(config, knex, logger, { telemetry, runAudit: booksAudit(config, knex, chains, telemetry.audit, trades) });
  // The keeper's senders (its own keys, never the relayer's): they drain the keeper's outbox.
  // What they send is prepared by the api (it holds the request signer); the worker hands the outcomes to the trades.
  const keeper = keeperPart(config, 'worker', {
    knex, logger, registry: telemetry.registry, chains: () => chains.registryCache.allChains(), duties: { report: () => trades().reportKeeperSends() },
  });
  return {
    metrics: telemetry.registry,
    chains,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    async start(where) {
      const running = await startPolling(config, logger, knex, { ...where, activities, orchestrator, starts, jobs, telemetry });
      keeper.start();
      return running;
    },
    async close() {
      await keeper.stop();
      await jobs.close();
      await starts.stop();
      await orchestrator.close();
      await signers.signer.close();
      await telemetry.close();
    },
  };
}

/**
 * Starts the worker's polling of `trade-lifecycle` and what runs beside it: webhook delivery first,
 * then the Temporal client and the start reconciler, the trade gauges, the proofs backlog sampler, the
 * audit and retention jobs. Its `stop` ends the sampler, then the polling.
 */
async function startPolling(config: Config, logger: Logger, knex: Knex, held: {
  databaseUrl: string; connection: WorkerConnectionOptions & { logger: Logger };
  activities: TradeActivities; orchestrator: OrchestratorSlot; starts: TradeStarts; jobs: ScheduledJobs; telemetry: ProcessTelemetry;
}): Promise<RunningWorker> {
  const { databaseUrl, jobs, telemetry } = held;
  await ensureSearchAttributes(config, logger);
  await jobs.startWebhookDelivery(databaseUrl);
  const lifecycle = await startLifecycleWorker({
    ...held.connection, taskQueue: config.TEMPORAL_TASK_QUEUE, activities: held.activities, onApplied: telemetry.trades.observe,
  });
  let backlog: ProofBacklogSampler | undefined;
  const stop = once(async () => {
    await backlog?.stop();
    await lifecycle.stop();
  });
  try {
    // The worker hands over pending follow-ups and starts, now and on a schedule, every trade whose workflow did not start.
    held.orchestrator.set(await temporalOrchestrator(config, knex, logger, { sweep: true }));
    held.starts.run();
    // The trade gauges are the worker's to read (one worker at a time, by an advisory lock).
    jobs.startTradeGauges(databaseUrl);
    // The proofs queue's backlog as Temporal counts it (what ProofBacklogGrowing and KEDA look at).
    backlog = await startProofBacklogSampler({
      registry: telemetry.registry, ...temporalConnectOptions(config), namespace: config.TEMPORAL_NAMESPACE,
      taskQueue: config.TEMPORAL_PROOFS_TASK_QUEUE, intervalMs: telemetry.sampleMs, logger,
    });
    // The books audit and retention run beside the lifecycle (one run per cron tick across processes).
    await jobs.startAudit(databaseUrl);
    await jobs.startRetention(databaseUrl);
  } catch (error) {
    await stop();
    throw error;
  }
  return { ...lifecycle, stop };
}

/** Registers TradeStatus/AdId/RouteId on the namespace if missing; where that is not allowed (Temporal Cloud), an operator does it. */
async function ensureSearchAttributes(config: Config, logger: Logger): Promise<void> {
  const connection = await Connection.connect(temporalConnectOptions(config));
  try {
    await registerTradeSearchAttributes(connection, config.TEMPORAL_NAMESPACE);
  } catch (error) {
    logger.warn({ err: error }, 'could not register the trade search attributes: create them with `temporal operator search-attribute create`');
  } finally {
    await connection.close();
  }
}
