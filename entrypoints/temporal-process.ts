import { Connection } from '@temporalio/client';
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import express from 'express';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config/config.ts';
import { registerTradeSearchAttributes } from '../workflows/temporal/client.ts';
import { startProverWorker } from '../workflows/temporal/prover-worker.ts';
import { startLifecycleWorker, type RunningWorker } from '../workflows/temporal/worker.ts';
import { temporalConnectOptions } from '../workflows/temporal/connection-options.ts';
import { startProofBacklogSampler, type ProofBacklogSampler } from '../workflows/temporal/proof-backlog.ts';
import { resolveSecrets } from '../config/secrets.ts';
import { buildContainer } from './container.ts';
import { openDatabase } from './database.ts';
import { freeLoopbackPort } from './free-port.ts';
import { listen } from './http-server.ts';
import type { Stoppable } from './process.ts';
import { checkChainVerifiers, trustProvingKey } from './proving-key.ts';

/** Where worker and prover serve /metrics when METRICS_PORT is unset (they have no API port to share). */
const DEFAULT_METRICS_PORT = 9464;

export type TemporalProcessKind = 'worker' | 'prover';

/**
 * The `worker` (queue `trade-lifecycle`: trade workflows, verification, state writes) or `prover`
 * (queue `proofs`: generateProof on the Piscina pool) process over DATABASE_URL and
 * TEMPORAL_ADDRESS. Serves `/metrics` on METRICS_PORT: the container's registry followed by the
 * Temporal SDK's own metrics (core's Prometheus exporter on a loopback port, forwarded). METRICS_PORT
 * defaults to 9464 here.
 */
export async function startTemporalProcess(kind: TemporalProcessKind, config: Config, logger: Logger): Promise<Stoppable & { metricsUrl: string }> {
  if (!config.DATABASE_URL) throw new ConfigError(`DATABASE_URL is required for the ${kind} process`);
  if (!config.TEMPORAL_ADDRESS) throw new ConfigError(`TEMPORAL_ADDRESS is required for the ${kind} process`);
  // Only this role's secrets (none: neither signs): one it must not hold stops it here, before anything connects.
  const secrets = resolveSecrets(config, kind);
  // The prover proves, the worker drives the unlocks: production refuses a key it cannot trust.
  const provingKey = await trustProvingKey(config, logger);
  const sdkMetricsPort = await freeLoopbackPort();
  Runtime.install({
    logger: new DefaultLogger(
      sdkLogLevel(config.LOG_LEVEL),
      (entry) => logger[
        entry.level === 'TRACE' ? 'trace'
          : entry.level === 'DEBUG' ? 'debug'
            : entry.level === 'INFO' ? 'info'
              : entry.level === 'WARN' ? 'warn'
                : 'error'
      ](
        { ...entry.meta, sdk: true },
        entry.message,
      ),
    ),
    telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${sdkMetricsPort}` } } },
  });

  const database = await openDatabase(config, logger, { migrate: false });
  const container = buildContainer(config, logger, database.knex, { secrets, role: kind });
  // Read before anything opens: a TLS file that cannot be read stops the process here, naming its setting.
  const temporal = temporalConnectOptions(config);
  const connection = { ...temporal, namespace: config.TEMPORAL_NAMESPACE, logger };
  let running: RunningWorker | undefined;
  let proofBacklog: ProofBacklogSampler | undefined;
  let http: Awaited<ReturnType<typeof listen>> | undefined;
  try {
    await checkChainVerifiers(provingKey, container, logger);
    if (kind === 'worker') {
      await ensureSearchAttributes(config, logger);
      // Webhooks have no Temporal workflow: their durable jobs are pg-boss's, in this process's database.
      await container.startWebhookDispatcher(config.DATABASE_URL);
      running = await startLifecycleWorker({
        ...connection,
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        activities: container.activities,
        onApplied: container.tradeMetrics.observe,
      });
      // The worker starts, now and on a schedule, every trade whose reservation committed but whose workflow did not start.
      await container.startOrchestrator(config.DATABASE_URL);
      container.tradeStarts.run();
      // The trade gauges are the worker's to read (one worker at a time, by an advisory lock).
      container.startTradeGauges(config.DATABASE_URL);
      // The proofs queue's backlog as Temporal counts it (what ProofBacklogGrowing and KEDA look at).
      proofBacklog = await startProofBacklogSampler({
        registry: container.metrics, ...temporal, namespace: config.TEMPORAL_NAMESPACE,
        taskQueue: config.TEMPORAL_PROOFS_TASK_QUEUE, intervalMs: config.METRICS_SAMPLE_SECONDS * 1000, logger,
      });
      // The books audit runs beside the lifecycle (once per cron tick across workers).
      await container.startAuditJob(config.DATABASE_URL);
      // So does retention (one run per cron tick across workers and embedded runners alike).
      await container.startRetentionJob(config.DATABASE_URL);
    } else {
      const pool = container.prover();
      // Threads load their artifacts (and a native prover its tables) before the worker takes a task.
      await pool.ready();
      running = await startProverWorker({
        ...connection,
        taskQueue: config.TEMPORAL_PROOFS_TASK_QUEUE,
        generateProof: container.activities.generateProof,
        onApplied: container.tradeMetrics.observe,
        concurrency: pool.size,
      });
    }
    const app = express();
    app.disable('x-powered-by');
    app.get('/metrics', async (_req, res) => {
      const own = await container.metrics.metrics();
      const sdk = await fetch(`http://127.0.0.1:${sdkMetricsPort}/metrics`).then((r) => r.text()).catch(() => '');
      res.type(container.metrics.contentType).send(`${own}\n${sdk}`);
    });
    app.get('/health', (_req, res) => {
      const state = running!.worker.getState();
      res.status(state === 'RUNNING' ? 200 : 503).json({ status: state === 'RUNNING' ? 'ok' : 'unavailable', worker: state });
    });
    http = await listen(app, config.HOST, config.METRICS_PORT ?? DEFAULT_METRICS_PORT, logger, `${kind} metrics`);
  } catch (error) {
    await proofBacklog?.stop();
    await running?.stop();
    await container.close();
    await database.close();
    throw error;
  }
  logger.info(
    {
      taskQueue: kind === 'worker' ? config.TEMPORAL_TASK_QUEUE : config.TEMPORAL_PROOFS_TASK_QUEUE,
      temporal: config.TEMPORAL_ADDRESS,
    },
    `temporal ${kind} polling`,
  );
  // A worker that stops by itself (lost server beyond retries) takes the process down: its supervisor restarts it.
  running.done.catch(() => process.exit(1));
  let stopping: Promise<void> | undefined;
  return {
    metricsUrl: `${http.url}/metrics`,
    stop: () =>
      (stopping ??= (async () => {
        await proofBacklog?.stop();
        await running!.stop();
        await http!.close();
        await container.close();
        await database.close();
      })()),
  };
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

function sdkLogLevel(level: Config['LOG_LEVEL']): LogLevel {
  if (level === 'trace' || level === 'debug') return level.toUpperCase() as LogLevel;
  if (level === 'info') return 'INFO';
  if (level === 'warn') return 'WARN';
  return 'ERROR';
}

