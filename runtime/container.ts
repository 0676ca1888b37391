import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createAuthPurger, type AuthPurger } from '../auth/purge.ts';
import { createAuthService, type AuthService } from '../auth/sign-in.ts';
import { createRelayerSigners, type RelayerSigners } from '../chains/signers.ts';
import { createHorizonAccountReader } from '../chains/stellar/horizon.ts';
import { createTransactionVerifier, type ChainClientFactory, type TransactionVerifier } from '../chains/verify.ts';
import type { Config } from '../config.ts';
import { RegistryCache } from '../db/repositories/registry-cache.ts';
import { MerkleTreeStore } from '../prover/merkle/store.ts';
import { proverMetrics } from '../prover/metrics.ts';
import { ProverPool } from '../prover/pool.ts';
import { resolveSecrets, type Secrets } from '../secrets.ts';

/**
 * Every long-lived dependency of a process, built once from the config. The API, the worker and
 * the prover process take what they need from here; nothing below builds its own.
 */
export interface Container {
  config: Config;
  logger: Logger;
  knex: Knex;
  secrets: Secrets;
  /** The registry that `/metrics` serves: every metric of the process goes here. */
  metrics: Registry;
  signers: RelayerSigners;
  registryCache: RegistryCache;
  verifier: TransactionVerifier;
  merkleStore: MerkleTreeStore;
  auth: AuthService;
  /** Deletes expired challenges and ended sessions every AUTH_PURGE_INTERVAL_SECONDS (started here, stopped by `close`). */
  authPurger: AuthPurger;
  /**
   * The proof pool, started on first use: its threads load the zkey (about a second and a few
   * hundred MB each), which a process that never proves should not pay for. Its metrics are on
   * `metrics` from the start.
   */
  prover(): ProverPool;
  /** Stops what the container started (the purge schedule, the prover pool); the caller owns `knex`. */
  close(): Promise<void>;
}

export interface ContainerOptions {
  /** How RPC clients are made (tests may point them elsewhere). */
  chainClients?: ChainClientFactory;
  /** Secrets already resolved (entry points resolve them before anything starts, to fail fast). */
  secrets?: Secrets;
}

/** Builds the container over an open, migrated database. */
export function buildContainer(config: Config, logger: Logger, knex: Knex, options: ContainerOptions = {}): Container {
  const secrets = options.secrets ?? resolveSecrets(config);
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  proverMetrics(metrics);
  let pool: ProverPool | undefined;
  const authPurger = createAuthPurger({ knex, logger, intervalMs: config.AUTH_PURGE_INTERVAL_SECONDS * 1000 });
  authPurger.start();
  return {
    config,
    logger,
    knex,
    secrets,
    metrics,
    signers: createRelayerSigners(secrets, { name: config.EIP712_DOMAIN_NAME, version: config.EIP712_DOMAIN_VERSION }),
    registryCache: new RegistryCache(knex),
    verifier: createTransactionVerifier(options.chainClients),
    merkleStore: new MerkleTreeStore(knex),
    auth: createAuthService({
      config, secrets, knex,
      stellarAccounts: config.STELLAR_HORIZON_URL ? createHorizonAccountReader(config.STELLAR_HORIZON_URL) : undefined,
    }),
    authPurger,
    prover() {
      if (!pool) {
        pool = new ProverPool({ size: config.PROVER_POOL_SIZE, maxQueue: config.PROVER_QUEUE_MAX, registry: metrics });
        logger.info({ size: pool.size }, 'prover pool started');
      }
      return pool;
    },
    async close() {
      await authPurger.stop();
      await pool?.close();
    },
  };
}
