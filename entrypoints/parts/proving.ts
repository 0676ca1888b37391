import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { ConfigError, type Config } from '../../config/config.ts';
import { announceProverBackend, resolveProverBackend, type ProverBackend, type ResolvedProverBackend } from '../../prover/backend.ts';
import { NativeProverUnavailableError, ProverClosedError } from '../../prover/errors.ts';
import type { MerkleTreeStore } from '../../prover/merkle/store.ts';
import { ProverPool } from '../../prover/pool.ts';
import { createActivities } from '../../trades/activities.ts';
import type { FollowUpsWithin, TradeActivities } from '../../trades/orchestrator.ts';
import type { ChainReaders } from './chains.ts';

/** A proof pool started on first use. */
export interface LazyProverPool {
  /** The pool (PROVER_POOL_SIZE threads, PROVER_BACKEND), started by the first call. */
  get(): ProverPool;
  /**
   * Moves proving to the backend PROVER_BACKEND names now (native, once the first start built it):
   * when a pool runs another backend, a new one is started and warmed, then new proofs go to it
   * while the old pool finishes every proof it accepted and stops, so none is lost or made twice.
   * Resolves, once new proofs go to it, to the backend they use (the first pool's, when none started yet).
   */
  reload(): Promise<ProverBackend>;
  /** Stops the pool if it was started, after a reload under way and the proofs of a pool it replaced. */
  close(): Promise<void>;
}

/**
 * The proof pool, started on first use: its threads load the zkey (about a second and a few
 * hundred MB each), which a process that never proves should not pay for. Its metrics go to
 * `registry` (registered from the start by `startTelemetry`). `nativeBinary`: where the native
 * prover is (default: where `npm run build:native` puts it).
 */
export function lazyProverPool(config: Config, registry: Registry, logger: Logger, { nativeBinary }: { nativeBinary?: string } = {}): LazyProverPool {
  const options = {
    size: config.PROVER_POOL_SIZE, maxQueue: config.PROVER_QUEUE_MAX, registry,
    backend: config.PROVER_BACKEND, nativeThreads: config.PROVER_NATIVE_THREADS, nativeBinary,
  };
  let pool: ProverPool | undefined;
  let closing: Promise<void> | undefined;
  // The last reload (one at a time), and old pools finishing their proofs: close waits for both.
  let reloading: Promise<unknown> = Promise.resolve();
  const retiring = new Set<Promise<void>>();
  const reload = async (): Promise<ProverBackend> => {
    const wanted = resolveProverBackend(config.PROVER_BACKEND, nativeBinary).backend;
    if (!pool || closing || pool.backend === wanted) return wanted;
    const next = new ProverPool(options);
    try {
      await next.ready();
    } catch (error) {
      await next.close({ drain: false });
      throw error;
    }
    // The service began stopping while the new pool warmed: it never served.
    if (closing) {
      await next.close({ drain: false });
      return pool.backend;
    }
    const previous = pool;
    pool = next;
    logger.debug({ size: next.size, backend: next.backend, was: previous.backend }, `prover pool moved to ${next.backend}`);
    // Proofs it already accepted finish where they started; none is sent anywhere else.
    const retired = previous.close({ drain: true }).finally(() => retiring.delete(retired));
    retiring.add(retired);
    return next.backend;
  };
  return {
    get() {
      if (closing) throw new ProverClosedError();
      if (!pool) {
        pool = new ProverPool(options);
        logger.info({ size: pool.size, backend: pool.backend }, 'prover pool started');
      }
      return pool;
    },
    reload() {
      const run = reloading.catch(() => undefined).then(reload);
      reloading = run.catch(() => undefined);
      return run;
    },
    close() {
      closing ??= (async () => {
        await reloading;
        await Promise.all([...retiring]);
        await pool?.close();
      })();
      return closing;
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
