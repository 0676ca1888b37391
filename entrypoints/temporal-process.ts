import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import express from 'express';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { ConfigError, type Config } from '../config/config.ts';
import { resolveSecrets } from '../config/secrets.ts';
import { temporalConnectOptions } from '../workflows/temporal/connection-options.ts';
import type { RunningWorker, WorkerConnectionOptions } from '../workflows/temporal/worker.ts';
import { openDatabase } from './database.ts';
import { freeLoopbackPort } from './free-port.ts';
import { listen, type HttpServer } from './http-server.ts';
import type { ChainReaders } from './parts/chains.ts';
import type { Stoppable } from './process.ts';
import { checkChainVerifiers, trustProvingKey } from './proving-key.ts';

/** Where worker and prover serve /metrics when METRICS_PORT is unset (they have no API port to share). */
const DEFAULT_METRICS_PORT = 9464;

/** The SDK's log levels as the process logger's. */
const PINO_LEVEL = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

export type TemporalProcessKind = 'worker' | 'prover';

/** What a Temporal process holds (compose/worker.ts, compose/prover.ts), built over its database before anything starts. */
export interface TemporalParts {
  /** The registry its /metrics serves (before the Temporal SDK's own metrics). */
  metrics: Registry;
  /** Its chain readers (production checks the registered chains' verifiers with them before starting). */
  chains: Pick<ChainReaders, 'registryCache' | 'chains'>;
  /** The task queue it polls. */
  taskQueue: string;
  /** Starts polling (and what runs beside it); on failure it stops what it started before rejecting. */
  start(where: { databaseUrl: string; connection: WorkerConnectionOptions & { logger: Logger } }): Promise<RunningWorker>;
  /** Stops the rest of what it holds, after the worker stopped polling; the caller owns the database. */
  close(): Promise<void>;
}

/**
 * Runs the `worker` or `prover` process over DATABASE_URL and TEMPORAL_ADDRESS, `compose` building
 * what it holds. Serves `/health` (the worker's state) and `/metrics` on METRICS_PORT (default 9464):
 * the parts' registry followed by the Temporal SDK's own metrics (core's Prometheus exporter on a
 * loopback port, forwarded).
 */
export async function startTemporalProcess(
  kind: TemporalProcessKind, config: Config, logger: Logger, compose: (config: Config, logger: Logger, knex: Knex) => TemporalParts,
): Promise<Stoppable & { metricsUrl: string }> {
  if (!config.DATABASE_URL) throw new ConfigError(`DATABASE_URL is required for the ${kind} process`);
  if (!config.TEMPORAL_ADDRESS) throw new ConfigError(`TEMPORAL_ADDRESS is required for the ${kind} process`);
  // Only this role's secrets (none: neither signs): one it must not hold stops it here, before anything connects.
  resolveSecrets(config, kind);
  // The prover proves, the worker drives the unlocks: production refuses a key it cannot trust.
  const provingKey = await trustProvingKey(config, logger);
  const sdkMetricsPort = await installTemporalRuntime(config, logger);
  const database = await openDatabase(config, logger, { migrate: false });
  const parts = compose(config, logger, database.knex);
  // Read before anything opens: a TLS file that cannot be read stops the process here, naming its setting.
  const connection = { ...temporalConnectOptions(config), namespace: config.TEMPORAL_NAMESPACE, logger };
  let running: RunningWorker | undefined;
  let http: HttpServer | undefined;
  try {
    await checkChainVerifiers(provingKey, parts.chains, logger);
    running = await parts.start({ databaseUrl: config.DATABASE_URL, connection });
    const app = healthAndMetricsApp(parts.metrics, running, sdkMetricsPort);
    http = await listen(app, config.HOST, config.METRICS_PORT ?? DEFAULT_METRICS_PORT, logger, `${kind} metrics`);
  } catch (error) {
    await running?.stop();
    await parts.close();
    await database.close();
    throw error;
  }
  logger.info({ taskQueue: parts.taskQueue, temporal: config.TEMPORAL_ADDRESS }, `temporal ${kind} polling`);
  // A worker that stops by itself (lost server beyond retries) takes the process down: its supervisor restarts it.
  running.done.catch(() => process.exit(1));
  let stopping: Promise<void> | undefined;
  return {
    metricsUrl: `${http.url}/metrics`,
    stop: () =>
      (stopping ??= (async () => {
        await running!.stop();
        await http!.close();
        await parts.close();
        await database.close();
      })()),
  };
}

/** Installs the Temporal SDK's runtime: its log lines into `logger`, its metrics on a free loopback port (returned). */
async function installTemporalRuntime(config: Config, logger: Logger): Promise<number> {
  const sdkMetricsPort = await freeLoopbackPort();
  Runtime.install({
    logger: new DefaultLogger(sdkLogLevel(config.LOG_LEVEL), (entry) => {
      logger[PINO_LEVEL[entry.level] ?? 'error']({ ...entry.meta, sdk: true }, entry.message);
    }),
    telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${sdkMetricsPort}` } } },
  });
  return sdkMetricsPort;
}

/** `/metrics` (the process's registry, then the SDK's) and `/health` (200 while the worker is RUNNING, else 503). */
function healthAndMetricsApp(metrics: Registry, running: RunningWorker, sdkMetricsPort: number): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', async (_req, res) => {
    const own = await metrics.metrics();
    const sdk = await fetch(`http://127.0.0.1:${sdkMetricsPort}/metrics`).then((r) => r.text()).catch(() => '');
    res.type(metrics.contentType).send(`${own}\n${sdk}`);
  });
  app.get('/health', (_req, res) => {
    const state = running.worker.getState();
    res.status(state === 'RUNNING' ? 200 : 503).json({ status: state === 'RUNNING' ? 'ok' : 'unavailable', worker: state });
  });
  return app;
}

function sdkLogLevel(level: Config['LOG_LEVEL']): LogLevel {
  if (level === 'trace' || level === 'debug') return level.toUpperCase() as LogLevel;
  if (level === 'info') return 'INFO';
  if (level === 'warn') return 'WARN';
  return 'ERROR';
}
