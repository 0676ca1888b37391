import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Knex } from 'knex';
import { pino, type Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../db/embedded.ts';
import { createKnex, migrateToLatest } from '../db/knex.ts';
import { announceProverBackend } from '../prover/backend.ts';
import { NativeProverUnavailableError } from '../prover/errors.ts';
import { loadDemoRegistryIfEmpty } from '../registry/demo.ts';
import { resolveSecrets } from '../secrets.ts';
import { createApp } from './app.ts';
import { startLocalDevnet } from './local-devnet.ts';
import type { Devnet } from '../deploy/devnet/index.ts';

const SHUTDOWN_GRACE_MS = 5_000;

/** A running API: its URL and how to stop it (HTTP first, then the database pool, then PostgreSQL). */
export interface RunningService {
  url: string;
  port: number;
  config: Config;
  knex: Knex;
  logger: Logger;
  stop(): Promise<void>;
}

/** Says which prover backend proofs will use (PROVER_BACKEND); a native backend that is not built stops start-up. */
function logProverBackend(config: Config, logger: Logger): void {
  try {
    announceProverBackend(logger, { choice: config.PROVER_BACKEND, nativeThreads: config.PROVER_NATIVE_THREADS });
  } catch (error) {
    if (error instanceof NativeProverUnavailableError) throw new ConfigError(error.message);
    throw error;
  }
}

/**
 * Starts the whole service from a config: PostgreSQL (embedded unless DATABASE_URL is set),
 * migrations, the demo registry on an empty embedded database, the local devnet chains
 * (embedded run, see DEVNET), the HTTP server. Tests call it
 * with PORT 0 and their own DATABASE_URL.
 */
export async function start(config: Config = loadConfig(), logger: Logger = pino({ level: config.LOG_LEVEL })): Promise<RunningService> {
  const secrets = resolveSecrets(config);
  logProverBackend(config, logger);
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.DATABASE_URL;
  if (!databaseUrl) {
    embedded = await startEmbeddedDatabase({
      dataDir: path.join(config.DATA_DIR, 'pg'),
      port: config.EMBEDDED_PG_PORT,
      persistent: true,
      onLog: (line) => logger.debug({ postgres: line.trim() }),
    });
    databaseUrl = embedded.url;
    logger.info({ port: config.EMBEDDED_PG_PORT, dataDir: embedded.dataDir }, 'embedded PostgreSQL started');
  }
  const knex = createKnex(databaseUrl, config.DB_POOL_MAX);
  let devnet: Devnet | undefined;
  try {
    await migrateToLatest(knex);
    if (embedded) {
      const report = await loadDemoRegistryIfEmpty(knex, config.DEMO_REGISTRY_FILE);
      if (report) logger.info({ file: config.DEMO_REGISTRY_FILE, ...report.counts }, 'demo registry loaded into the empty database');
    }
    if (config.DEVNET === 'on' || (config.DEVNET === 'auto' && embedded)) devnet = await startLocalDevnet(config, secrets, knex, logger);
  } catch (error) {
    await devnet?.stop();
    await knex.destroy();
    await embedded?.stop();
    throw error;
  }

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const app = createApp({ config, secrets, knex, logger, metrics });
  const server: Server = await new Promise((resolve, reject) => {
    const listening = app.listen(config.PORT, config.HOST, (error?: Error) => (error ? reject(error) : resolve(listening)));
  });
  // Keep-alive longer than typical load balancer idle timeouts, so they close first.
  server.keepAliveTimeout = 65_000;
  const port = (server.address() as AddressInfo).port;
  const host = config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST;
  logger.info({ port }, 'API listening');

  let stopping: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    config,
    knex,
    logger,
    stop: () =>
      (stopping ??= (async () => {
        // Stop accepting, let in-flight requests finish (up to the grace period), then cut the rest
        // so the database pool is never destroyed under a running query.
        await new Promise<void>((resolve) => {
          const grace = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
          server.close(() => {
            clearTimeout(grace);
            resolve();
          });
          server.closeIdleConnections();
        });
        await knex.destroy();
        await devnet?.stop();
        await embedded?.stop();
      })()),
  };
}
