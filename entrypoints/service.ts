import type { Knex } from 'knex';
import { pino, type Logger } from 'pino';
import { createApp } from '../api/app.ts';
import { createMetricsApp } from '../api/metrics-app.ts';
import { ConfigError, loadConfig, type Config } from '../config/config.ts';
import type { Devnet } from '../devnet/index.ts';
import { announceProverBackend, type ResolvedProverBackend } from '../prover/backend.ts';
import { ensureNativeProver } from '../prover/native/binary.ts';
import { NativeProverUnavailableError } from '../prover/errors.ts';
import { resolveSecrets } from '../config/secrets.ts';
import { buildContainer, type Container } from './container.ts';
import { openDatabase } from './database.ts';
import { listen, type HttpServer } from './http-server.ts';
import { checkChainVerifiers, trustProvingKey } from './proving-key.ts';

/** A running API: its URL and how to stop it (HTTP first, then the container, then the database). */
export interface RunningService {
  url: string;
  port: number;
  /** Where GET /metrics is served when METRICS_PORT is set (else it is on `url`). */
  metricsUrl?: string;
  config: Config;
  knex: Knex;
  /** The database's URL (DATABASE_URL, or the embedded PostgreSQL's), for processes beside this one. */
  databaseUrl: string;
  logger: Logger;
  container: Container;
  /** The local devnet this process started (DEVNET), if any. */
  devnet?: Devnet;
  /** True when this process runs its own PostgreSQL (no DATABASE_URL), its data in DATA_DIR/pg. */
  embeddedDatabase: boolean;
  /** What proves (PROVER_BACKEND resolved at start-up) and why. */
  proverBackend: ResolvedProverBackend;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Bring the schema up to date first (default true; the production API leaves it to `npm run migrate`). */
  migrate?: boolean;
  /**
   * Build the native prover first when it is missing and cargo runs here (`npm start`: proofs are
   * native from the first start; `ensureNativeProver`). Default false: tests and production
   * processes take the binary as they find it.
   */
  buildNativeProver?: boolean;
  /** `api` (a deployment's API process) or `embedded` (`npm start`, the default): which secrets it holds (config/secrets.ts). */
  role?: 'api' | 'embedded';
}

/**
 * Starts the API over a database: `DATABASE_URL`, or (the embedded run, `npm start`) its own
 * PostgreSQL with the demo registry and the local devnet chains (see DEVNET). Tests call it with
 * PORT 0 and their own DATABASE_URL.
 */
export async function start(
  config: Config = loadConfig(),
  logger: Logger = pino({ level: config.LOG_LEVEL }),
  options: StartOptions = {},
): Promise<RunningService> {
  // Secrets and the prover backend first: a config that cannot run stops here, before anything has started.
  const role = options.role ?? 'embedded';
  const secrets = resolveSecrets(config, role);
  const notBuiltReason = options.buildNativeProver ? ensureNativeProver({ choice: config.PROVER_BACKEND, logger }).unavailable : undefined;
  const proverBackend = announceProverBackendOrStop(config, logger, notBuiltReason);
  // This process signs unlocks (and, on the embedded runner, proves): production refuses a key it cannot trust.
  const provingKey = await trustProvingKey(config, logger);
  const database = await openDatabase(config, logger, { migrate: options.migrate ?? true });
  const container = buildContainer(config, logger, database.knex, { secrets, role });
  let devnet: Devnet | undefined;
  // Each step undoes what came before it when it fails, so a failed start leaves nothing running.
  try {
    await relayerSignerReady(container, logger);
    if (config.DEVNET === 'on' || (config.DEVNET === 'auto' && database.embedded)) {
      // Loaded only here: the devnet's packages (anvil, solc, circomlibjs) are development dependencies,
      // absent from the production image.
      const { startLocalDevnet } = await import('./local-devnet.ts');
      devnet = await startLocalDevnet(config, container.signers.signer, database.knex, logger);
    }
    await checkChainVerifiers(provingKey, container, logger);
    await container.startOrchestrator(database.url);
  } catch (error) {
    await container.close();
    await devnet?.stop();
    await database.close();
    throw error;
  }
  let http: HttpServer | undefined;
  let metricsHttp: HttpServer | undefined;
  try {
    http = await listen(createApp(container), config.HOST, config.PORT, logger);
    container.apiListeningOn(http.port);
    // Sign-in records are the API's: the worker and prover processes never purge them.
    container.authPurger.start();
    if (config.METRICS_PORT !== undefined) {
      metricsHttp = await listen(createMetricsApp(container.metrics), config.HOST, config.METRICS_PORT, logger, 'metrics');
    }
  } catch (error) {
    await http?.close();
    await container.close();
    await devnet?.stop();
    await database.close();
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    url: http.url,
    port: http.port,
    metricsUrl: metricsHttp?.url,
    config,
    knex: database.knex,
    databaseUrl: database.url,
    logger,
    container,
    devnet,
    embeddedDatabase: database.embedded,
    proverBackend,
    stop: () =>
      (stopping ??= (async () => {
        // Open event streams never finish on their own: end them first, so the server closes at once.
        await container.eventHub.close();
        await http!.close();
        await metricsHttp?.close();
        await container.close();
        await devnet?.stop();
        await database.close();
      })()),
  };
}

/**
 * Reads the relayer signer's two public keys before anything is served: with RELAYER_SIGNER=pkcs11 a
 * token that is missing, locked or without the labelled keys stops start-up (ConfigError, exit 78)
 * rather than failing the first signed request.
 */
async function relayerSignerReady(container: Container, logger: Logger): Promise<void> {
  const { signer } = container.signers;
  try {
    const [evmAddress, stellarPublicKey] = await Promise.all([signer.evmAddress(), signer.stellarPublicKey()]);
    logger.info({ backend: signer.backend, evmAddress, stellarPublicKey }, `relayer signer ready (RELAYER_SIGNER=${signer.backend})`);
  } catch (error) {
    throw new ConfigError(`RELAYER_SIGNER=${signer.backend}: ${(error as Error).message}`);
  }
}

/** Says which prover backend proofs will use (PROVER_BACKEND); a native backend that is not built stops start-up (exit 78). */
function announceProverBackendOrStop(config: Config, logger: Logger, notBuiltReason?: string): ResolvedProverBackend {
  try {
    return announceProverBackend(logger, { choice: config.PROVER_BACKEND, nativeThreads: config.PROVER_NATIVE_THREADS, notBuiltReason });
  } catch (error) {
    if (error instanceof NativeProverUnavailableError) throw new ConfigError(error.message);
    throw error;
  }
}
