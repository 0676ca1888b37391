import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Config } from '../../config/config.ts';
import { MerkleTreeStore } from '../../prover/merkle/store.ts';
import { startProverWorker } from '../../workflows/temporal/prover-worker.ts';
import { chainReaders } from '../parts/chains.ts';
import { lazyProverPool, tradeActivities } from '../parts/proving.ts';
import { startTelemetry } from '../parts/telemetry.ts';
import type { TemporalParts } from '../temporal-process.ts';

/**
 * What the `prover` process holds (queue `proofs`): no secret and no signer, the chain readers
 * (the order chain's tree is mirrored before a proof), the proof pool (PROVER_POOL_SIZE threads)
 * and the one activity it serves, `generateProof`. Run as many as you like.
 */
export function composeProver(config: Config, logger: Logger, knex: Knex): TemporalParts {
  const telemetry = startTelemetry(config, 'prover', knex);
  const chains = chainReaders(knex, { registry: telemetry.registry, logger, config });
  const pool = lazyProverPool(config, telemetry.registry, logger);
  const { generateProof } = tradeActivities(config, knex, chains, new MerkleTreeStore(knex), pool.get);
  return {
    metrics: telemetry.registry,
    chains,
    taskQueue: config.TEMPORAL_PROOFS_TASK_QUEUE,
    async start({ connection }) {
      const prover = pool.get();
      // Threads load their artifacts (and a native prover its tables) before the worker takes a task.
      await prover.ready();
      return startProverWorker({
        ...connection, taskQueue: config.TEMPORAL_PROOFS_TASK_QUEUE, generateProof, onApplied: telemetry.trades.observe, concurrency: prover.size,
      });
    },
    async close() {
      await pool.close();
      await telemetry.close();
    },
  };
}
