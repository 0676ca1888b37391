import { Connection } from '@temporalio/client';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { TemporalTls } from './connection-options.ts';

/** What the proofs queue's backlog read last: tasks waiting for a prover, and how long the oldest has waited. */
export interface ProofBacklog {
  tasks: number;
  oldestSeconds: number;
}

/**
 * The activity backlog of `taskQueue` as the Temporal server counts it (DescribeTaskQueue with
 * `reportStats`, summed over the queue's partitions): proofs scheduled that no prover has taken.
 * The same figure KEDA's `temporal` trigger scales provers on. The Piscina queue inside a prover
 * cannot show it: a prover never takes more proofs than it has threads.
 */
export async function readProofBacklog(connection: Connection, namespace: string, taskQueue: string): Promise<ProofBacklog> {
  const { stats } = await connection.workflowService.describeTaskQueue({
    namespace,
    // TASK_QUEUE_KIND_NORMAL (1), TASK_QUEUE_TYPE_ACTIVITY (2): the proto enums' values (@temporalio/proto is not a direct dependency).
    taskQueue: { name: taskQueue, kind: 1 },
    taskQueueType: 2,
    reportStats: true,
  });
  const age = stats?.approximateBacklogAge;
  return {
    tasks: Number(stats?.approximateBacklogCount ?? 0),
    oldestSeconds: age ? Number(age.seconds ?? 0) + (age.nanos ?? 0) / 1e9 : 0,
  };
}

export interface ProofBacklogSampler {
  /** One read now (tests call it); rejects when Temporal does not answer (the gauges keep their last values). */
  sample(): Promise<ProofBacklog>;
  stop(): Promise<void>;
}

/**
 * `relayer_proof_backlog_tasks` and `relayer_proof_backlog_oldest_seconds` (label `task_queue`),
 * read from Temporal every `intervalMs` into memory (a scrape never calls Temporal), and
 * `relayer_proof_backlog_read_timestamp_seconds`, when they were last read. Run by the worker
 * process: with several workers each reads the same figure, rules take `max`.
 */
export async function startProofBacklogSampler(options: {
  registry: Registry; address: string; tls?: TemporalTls; apiKey?: string; namespace: string; taskQueue: string; intervalMs: number; logger: Logger;
}): Promise<ProofBacklogSampler> {
  const { registry, namespace, taskQueue, logger } = options;
  const tasks = new Gauge({
    name: 'relayer_proof_backlog_tasks',
    help: 'Proofs scheduled on the Temporal task queue that no prover has taken yet (Temporal\'s approximate backlog)',
    labelNames: ['task_queue'] as const,
    registers: [registry],
  });
  const oldest = new Gauge({
    name: 'relayer_proof_backlog_oldest_seconds',
    help: 'How long the oldest proof in the Temporal task queue\'s backlog has waited',
    labelNames: ['task_queue'] as const,
    registers: [registry],
  });
  const readAt = new Gauge({
    name: 'relayer_proof_backlog_read_timestamp_seconds',
    help: 'Unix time the proofs task queue\'s backlog was last read from Temporal',
    labelNames: ['task_queue'] as const,
    registers: [registry],
  });
  const connection = await Connection.connect({ address: options.address, tls: options.tls, apiKey: options.apiKey });
  const sample = async () => {
    const backlog = await readProofBacklog(connection, namespace, taskQueue);
    tasks.set({ task_queue: taskQueue }, backlog.tasks);
    oldest.set({ task_queue: taskQueue }, backlog.oldestSeconds);
    readAt.set({ task_queue: taskQueue }, Date.now() / 1000);
    return backlog;
  };
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  const loop = () => {
    running = sample().catch((error) => logger.warn({ err: error }, 'could not read the proofs task queue backlog from Temporal')).finally(() => {
      if (!stopped) timer = setTimeout(loop, options.intervalMs).unref();
    });
  };
  loop();
  return {
    sample,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await connection.close();
    },
  };
}
