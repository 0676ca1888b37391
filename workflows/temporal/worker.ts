import { createRequire } from 'node:module';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { Logger } from 'pino';
import { tracingBundleOptions, tracingWorkerOptions } from '../../telemetry/temporal.ts';
import type { TradeEvent } from '../../trades/lifecycle/index.ts';
import type { AppliedEvent, TradeActivities } from '../../trades/orchestrator.ts';
import type { TemporalTls } from './connection-options.ts';
import { reportingDomainErrors } from './failures.ts';
import { LIFECYCLE_TASK_QUEUE } from './workflows.ts';

/** The file the worker bundles into Temporal's workflow sandbox. */
export const WORKFLOWS_PATH = createRequire(import.meta.url).resolve('./workflows.ts');

/** Bundles the workflow code once (a few seconds); pass the result to several workers or replays. */
export function bundleTradeWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietBundlerLogger, ...tracingBundleOptions() });
}

export interface WorkerConnectionOptions {
  /** host:port of the Temporal frontend, or a connection the caller owns. */
  address?: string;
  /** TLS and API key for `address` (temporalConnectOptions). */
  tls?: TemporalTls;
  apiKey?: string;
  connection?: NativeConnection;
  namespace?: string;
}

export interface RunningWorker {
  worker: Worker;
  /** Settles when the worker stopped (rejects if it crashed). */
  done: Promise<void>;
  /** Stops polling, lets running tasks finish (up to the shutdown grace time), closes what it opened. */
  stop(): Promise<void>;
}

export interface LifecycleWorkerOptions extends WorkerConnectionOptions {
  /**
   * applyEvent (timers; and, for executions of the previous version and API pods of the previous release, confirmations
   * with verifyConfirmation). generateProof runs on the proofs queue (prover-worker.ts).
   */
  activities: Pick<TradeActivities, 'verifyConfirmation' | 'applyEvent'>;
  taskQueue?: string;
  /** A bundle from `bundleTradeWorkflows` (tests share one); bundled at start otherwise. */
  workflowBundle?: WorkflowBundleWithSourceMap;
  /** Observes each applied event (trade metrics). */
  onApplied?: (tradeId: string, applied: AppliedEvent, event: TradeEvent) => void | Promise<void>;
  logger?: Logger;
}

/**
 * The `worker` process's part (queue `trade-lifecycle`): runs the trade workflows and their light
 * activities. Domain errors leave it typed (failures.ts), so retry policies and the API see them.
 */
export async function startLifecycleWorker(options: LifecycleWorkerOptions): Promise<RunningWorker> {
  const { activities, onApplied } = options;
  const served: Pick<TradeActivities, 'verifyConfirmation' | 'applyEvent'> = {
    verifyConfirmation: (input) => activities.verifyConfirmation(input),
    applyEvent: async (input) => {
      // The result goes back to the workflow (Temporal records it): its follow-ups are written carried out.
      const applied = await activities.applyEvent({ ...input, carriedOut: true });
      await onApplied?.(input.tradeId, applied, input.event);
      return applied;
    },
  };
  return runWorker(options, {
    taskQueue: options.taskQueue ?? LIFECYCLE_TASK_QUEUE,
    activities: reportingDomainErrors(served),
    workflowBundle: options.workflowBundle ?? (await bundleTradeWorkflows()),
  });
}

/** Creates and runs a worker on its own or the given connection. */
export async function runWorker(
  options: WorkerConnectionOptions & { logger?: Logger },
  workerOptions: Omit<Parameters<typeof Worker.create>[0], 'connection' | 'namespace'>,
): Promise<RunningWorker> {
  if (!options.connection && !options.address) throw new Error('a Temporal worker needs an address or a connection');
  const connection = options.connection ?? (await NativeConnection.connect({ address: options.address, tls: options.tls, apiKey: options.apiKey }));
  let worker: Worker;
  try {
    worker = await Worker.create({
      connection,
      namespace: options.namespace ?? 'default',
      shutdownGraceTime: '10 s',
      ...tracingWorkerOptions(),
      ...workerOptions,
    });
  } catch (error) {
    if (!options.connection) await connection.close();
    throw error;
  }
  const done = worker.run();
  done.catch((error: unknown) => options.logger?.error({ err: error }, 'temporal worker stopped with an error'));
  let stopping: Promise<void> | undefined;
  return {
    worker,
    done,
    stop: () =>
      (stopping ??= (async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await done.catch(() => undefined);
        if (!options.connection) await connection.close();
      })()),
  };
}

const quietBundlerLogger = {
  log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined,
  warn: (message: string, meta?: unknown) => console.warn(message, meta ?? ''),
  error: (message: string, meta?: unknown) => console.error(message, meta ?? ''),
};
