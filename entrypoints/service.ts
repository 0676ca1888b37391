import type { Knex } from 'knex';
import { pino, type Logger } from 'pino';
import { createApp } from '../api/app.ts';
import { createMetricsApp } from '../api/metrics-app.ts';
import { keeperSignerFromConfig } from '../keeper/keys.ts';
import { loadConfig, type Config } from '../config/config.ts';
import type { HealthDetails } from '../api/deps.ts';
import type { Devnet } from '../devnet/index.ts';
import type { ResolvedProverBackend } from '../prover/backend.ts';
import { ensureNativeProver } from '../prover/native/binary.ts';
import { resolveSecrets } from '../config/secrets.ts';
import type { ChainJoin, DevnetChainStatus } from './chain-join.ts';
import { composeApi, type ApiParts } from './compose/api.ts';
import { openDatabase } from './database.ts';
import { refuseEmbeddedInProduction } from './embedded-in-production.ts';
import { relayerSignerReady } from './parts/chains.ts';
import { announceProverBackendOrStop } from './parts/proving.ts';
import { listen, type HttpServer } from './http-server.ts';
import { buildNativeProverLater, nativeProverBuildLog, proverReady, type ProverStatus } from './native-prover-build.ts';
import { processLoggerOptions } from './logger.ts';
import { checkChainVerifiers, trustProvingKey } from './proving-key.ts';

/** A running API: its URL and how to stop it (HTTP first, then its parts, then the database). */
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
  /** What the process holds (compose/api.ts). */
  container: ApiParts;
  /** The local devnet this process started (DEVNET), if any. */
  devnet?: Devnet;
  /** True when this process runs its own PostgreSQL (no DATABASE_URL), its data in DATA_DIR/pg. */
  embeddedDatabase: boolean;
  /** What proved at start-up (PROVER_BACKEND resolved then) and why. */
  proverBackend: ResolvedProverBackend;
  /** What proves now: the backend, and the native prover's build while the first start makes it (`/health` reports it). */
  proverStatus(): ProverStatus;
  /** The local devnet's chains and their states, when this process runs one (what `/health` reports). */
  devnetChains(): DevnetChainStatus[];
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Bring the schema up to date first (default true; the production API leaves it to `npm run migrate`). */
  migrate?: boolean;
  /**
   * Build the native prover when it is missing and cargo runs here (`npm start`; `ensureNativeProver`):
   * under PROVER_BACKEND=auto while serving, snarkjs proving until native proofs take over
   * (`buildNativeProverLater`); under PROVER_BACKEND=native before serving. Default false: tests
   * and production processes take the binary as they find it.
   */
  buildNativeProver?: boolean;
  /** `api` (a deployment's API process) or `embedded` (`npm start`, the default): which secrets it holds (config/secrets.ts). */
  role?: 'api' | 'embedded';
  /**
   * Serve once the EVM chains are up, the local Stellar network joining when built and deployed
   * (`npm start`: healthy in seconds on a fresh clone; `/health` and the log follow the join, and
   * requests that need it answer 503 CHAIN_UNAVAILABLE until then). Default false: the network is
   * built and started before this resolves (tests).
   */
  stellarJoinsLater?: boolean;
}

/**
 * Starts the API over a database: `DATABASE_URL`, or (the embedded run, `npm start`) its own
 * PostgreSQL with the demo registry and the local devnet chains (see DEVNET). Tests call it with
 * PORT 0 and their own DATABASE_URL.
 */
export async function start(
  config: Config = loadConfig(),
  logger: Logger = pino(processLoggerOptions({ level: config.LOG_LEVEL })),
  options: StartOptions = {},
): Promise<RunningService> {
  // Secrets and the prover backend first: a config that cannot run stops here, before anything has started.
  refuseEmbeddedInProduction(config);
  const role = options.role ?? 'embedded';
  const secrets = resolveSecrets(config, role);
  const native = options.buildNativeProver ? ensureNativeProver({ choice: config.PROVER_BACKEND, logger, inBackground: true }) : undefined;
  const proverBackend = announceProverBackendOrStop(config, logger, native?.unavailable);
  let prover = proverReady(proverBackend);
  // This process signs unlocks (and, on the embedded runner, proves): production refuses a key it cannot trust.
  const provingKey = await trustProvingKey(config, logger);
  const database = await openDatabase(config, logger, { migrate: options.migrate ?? true });
  // Loaded only when it runs: the devnet's packages (anvil, solc, circomlibjs) are development
  // dependencies, absent from the production image.
  const localDevnet = config.DEVNET === 'on' || (config.DEVNET === 'auto' && database.embedded) ? await import('./local-devnet.ts') : undefined;
  const runsDevnet = localDevnet !== undefined;
  const stellarJoin = options.stellarJoinsLater && config.STELLAR_DEVNET === 'on' ? localDevnet?.stellarJoin() : undefined;
  let devnet: Devnet | undefined;
  const devnetChains = () => localDevnetChains(devnet, stellarJoin);
  const parts = composeApi(config, logger, database.knex, {
    secrets, role,
    gateChains: stellarJoin && ((chains) => stellarJoin.gate(chains)),
    healthDetails: runsDevnet || native ? () => localHealth(devnet ? devnetChains() : undefined, native && prover.status()) : undefined,
  });
  let servers: ApiServers | undefined;
  // Each step undoes what came before it when it fails, so a failed start leaves nothing running.
  try {
    await relayerSignerReady(parts.signers, logger);
    // The operator's stop holds from the first request: nothing is served before the switch is read.
    await parts.signingSwitch.start();
    // The keeper's accounts get gas on the devnet (the signer only reads their addresses here; the keeper part sends).
    const keeper = localDevnet ? keeperSignerFromConfig(config, role) : undefined;
    try {
      devnet = await localDevnet?.startLocalDevnet(config, parts.signers.signer, database.knex, logger, { stellarJoin, keeper });
    } finally {
      await keeper?.close();
    }
    await checkChainVerifiers(provingKey, parts, logger);
    await parts.startOrchestrator(database.url);
    servers = await serveApi(config, logger, parts);
  } catch (error) {
    await parts.close();
    await devnet?.stop();
    await database.close();
    throw error;
  }
  // Built once the API serves (cargo would slow every step before it): snarkjs proves meanwhile, proofs move to it when built.
  if (native?.later) {
    prover = buildNativeProverLater({ logger, takeOver: () => parts.proverPool.reload(), logFile: nativeProverBuildLog(config.DATA_DIR) });
  }
  let stopping: Promise<void> | undefined;
  return {
    url: servers.http.url,
    port: servers.http.port,
    metricsUrl: servers.metrics?.url,
    config,
    knex: database.knex,
    databaseUrl: database.url,
    logger,
    container: parts,
    devnet,
    embeddedDatabase: database.embedded,
    proverBackend,
    proverStatus: () => prover.status(),
    devnetChains,
    stop: () =>
      (stopping ??= (async () => {
        // Open event streams never finish on their own: end them first, so the server closes at once.
        await parts.eventHub.close();
        await servers.http.close();
        await servers.metrics?.close();
        await prover.stop();
        await parts.close();
        await devnet?.stop();
        await database.close();
      })()),
  };
}

/**
 * Each chain of the local devnet and its state: the chains it runs are ready; the Stellar network,
 * when it joins later, as far as it got. Empty without a devnet.
 */
function localDevnetChains(devnet: Devnet | undefined, stellarJoin: ChainJoin | undefined): DevnetChainStatus[] {
  if (!devnet) return [];
  const chains: DevnetChainStatus[] = Object.keys(devnet.rpcUrls)
    .filter((chainId) => chainId !== stellarJoin?.chainId)
    .map((chainId) => ({
      chainId, state: 'ready' as const, seconds: 0,
      name: devnet.registry.chains.find((chain) => String(chain.chainId) === chainId)?.name ?? `chain ${chainId}`,
    }));
  if (stellarJoin) chains.push(stellarJoin.status());
  return chains;
}

/**
 * `/health`'s details of a local run: the Node it runs on, once its devnet started the devnet
 * chains' states, and on `npm start` what proves (the native prover's build while it runs).
 */
function localHealth(chains: DevnetChainStatus[] | undefined, prover: ProverStatus | undefined): HealthDetails {
  return {
    node: process.version,
    ...(chains ? { devnet: { ready: chains.every((chain) => chain.state === 'ready'), chains } } : {}),
    ...(prover ? { prover } : {}),
  };
}

/** The API's HTTP servers: the app, and /metrics on its own port when METRICS_PORT is set. */
interface ApiServers {
  http: HttpServer;
  metrics?: HttpServer;
}

/** Serves the app on HOST:PORT, then starts the sign-in purge and /metrics on METRICS_PORT; a failure closes the app's server. */
async function serveApi(config: Config, logger: Logger, parts: ApiParts): Promise<ApiServers> {
  const http = await listen(createApp(parts), config.HOST, config.PORT, logger);
  try {
    parts.apiListeningOn(http.port);
    // Sign-in records are the API's: the worker and prover processes never purge them.
    parts.authPurger.start();
    if (config.METRICS_PORT === undefined) return { http };
    return { http, metrics: await listen(createMetricsApp(parts.metrics), config.HOST, config.METRICS_PORT, logger, 'metrics') };
  } catch (error) {
    await http.close();
    throw error;
  }
}
