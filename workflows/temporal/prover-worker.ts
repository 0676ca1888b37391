import { Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import type { AppliedEvent, TradeActivities } from '../../trades/orchestrator.ts';
import type { TradeEvent } from '../../trades/lifecycle/index.ts';
import { reportingDomainErrors } from './failures.ts';
import { runWorker, type RunningWorker, type WorkerConnectionOptions } from './worker.ts';
import { PROOFS_TASK_QUEUE } from './workflows.ts';

export interface ProverWorkerOptions extends WorkerConnectionOptions {
  /** The activity that mirrors the deposit, proves, and stores the proof with PROOF_READY in one transaction (trades/applier/prove-step.ts). */
  generateProof: TradeActivities['generateProof'];
  /** Observes each proof applied (trade metrics: deposit to proof). */
  onApplied?: (tradeId: string, applied: AppliedEvent, event: TradeEvent) => void | Promise<void>;
  taskQueue?: string;
  /** Proofs run at once by this process (the pool's size); the worker takes one activity more, prepared meanwhile. */
  concurrency: number;
  /** Heartbeat period while a proof runs (the workflow's heartbeat timeout is 10 s). */
  heartbeatMs?: number;
  logger?: Logger;
}

/**
 * The `prover` process's part (queue `proofs`): serves `generateProof` only, `concurrency` at a
 * time, heartbeating while each runs, so a prover that dies mid-proof is noticed by Temporal within
 * the heartbeat timeout and the proof retried on another prover process.
 */
export async function startProverWorker(options: ProverWorkerOptions): Promise<RunningWorker> {
  const heartbeatMs = options.heartbeatMs ?? 2_000;
  const generateProof: TradeActivities['generateProof'] = async (input) => {
    const context = Context.current();
    context.heartbeat();
    const beat = setInterval(() => context.heartbeat(), heartbeatMs);
    try {
      // The result goes back to the workflow (Temporal records it): its follow-ups are written carried out.
      const applied = await options.generateProof({ ...input, carriedOut: true });
      await options.onApplied?.(input.tradeId, applied, { type: 'PROOF_READY' });
      return applied;
    } finally {
      clearInterval(beat);
    }
  };
  return runWorker(options, {
    taskQueue: options.taskQueue ?? PROOFS_TASK_QUEUE,
    activities: reportingDomainErrors({ generateProof }),
    // One more than the pool proves at once: an activity spends part of its time outside the pool
    // (reading the trade, syncing the tree, applying the result), so the extra one prepares the
    // next proof while the pool proves, and the pool is never left idle between proofs.
    maxConcurrentActivityTaskExecutions: options.concurrency + 1,
  });
}
