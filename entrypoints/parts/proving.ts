import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { ConfigError, type Config } from '../../config/config.ts';
import { announceProverBackend, type ResolvedProverBackend } from '../../prover/backend.ts';
import { NativeProverUnavailableError } from '../../prover/errors.ts';
import type { MerkleTreeStore } from '../../prover/merkle/store.ts';
import { ProverPool } from '../../prover/pool.ts';
import { createActivities } from '../../trades/activities.ts';
import type { FollowUpsWithin, TradeActivities } from '../../trades/orchestrator.ts';
import type { ChainReaders } from './chains.ts';

/** A proof pool started on first use. */
export interface LazyProverPool {
  /** The pool (PROVER_POOL_SIZE threads, PROVER_BACKEND), started by the first call. */
  get(): ProverPool;
  /** Stops the pool if it was started. */
  close(): Promise<void>;
}

/**
 * The proof pool, started on first use: its threads load the zkey (about a second and a few
 * hundred MB each), which a process that never proves should not pay for. Its metrics go to
 * `registry` (registered from the start by `startTelemetry`).
 */
export function lazyProverPool(config: Config, registry: Registry, logger: Logger): LazyProverPool {
  let pool: ProverPool | undefined;
  return {
    get() {
      if (!pool) {
        pool = new ProverPool({
          size: config.PROVER_POOL_SIZE, maxQueue: config.PROVER_QUEUE_MAX, registry,
          backend: config.PROVER_BACKEND, nativeThreads: config.PROVER_NATIVE_THREADS,
        });
        logger.info({ size: pool.size }, 'prover pool started');
      }
      return pool;
    },
    async close() {
      await pool?.close();
    },
  };
}

/** The lifecycle steps both orchestrators run (trades/activities.ts): verification, one transaction per event, the proof. */
export function tradeActivities(
  config: Config, knex: Knex, chains: ChainReaders, merkleStore: MerkleTreeStore, prover: () => ProverPool,
  followUpsWithin?: () => FollowUpsWithin | undefined,
): TradeActivities {
  return createActivities({
    knex, registryCache: chains.registryCache, verifier: chains.verifier, merkleStore, prover,
    chains: chains.chains, orderChainReader: chains.orderChainReader,
    chainState: chains.chainState, signedRequestTtlSeconds: config.SIGNED_REQUEST_TTL_SECONDS, followUpsWithin,
  });
}

/** Says which prover backend proofs will use (PROVER_BACKEND); a native backend that is not built stops start-up (exit 78). */
export function announceProverBackendOrStop(config: Config, logger: Logger, notBuiltReason?: string): ResolvedProverBackend {
  try {
    return announceProverBackend(logger, { choice: config.PROVER_BACKEND, nativeThreads: config.PROVER_NATIVE_THREADS, notBuiltReason });
  } catch (error) {
    if (error instanceof NativeProverUnavailableError) throw new ConfigError(error.message);
    throw error;
  }
}
