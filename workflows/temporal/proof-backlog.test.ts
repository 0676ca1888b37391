import { randomUUID } from 'node:crypto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { INITIAL_STATE } from '../../trades/lifecycle/index.ts';
import { memoryActivities } from '../../test/support/memory-activities.ts';
import { eventually } from '../../test/support/devnet-client.ts';
import { startTemporalDevServer, stopped, type DevServer } from '../../test/support/temporal-stack.ts';
import { createTemporalOrchestrator, type TemporalOrchestrator } from './client.ts';
import { startProofBacklogSampler, type ProofBacklogSampler } from './proof-backlog.ts';
import { startProverWorker } from './prover-worker.ts';
import { startLifecycleWorker, type RunningWorker } from './worker.ts';

// The proofs queue's backlog read from a real Temporal dev server (the pinned CLI): trades whose
// deposits are confirmed while no prover polls `proofs` pile up there, and the gauge sees them.

const ORDER = { orderHash: '0x01', adChainId: '31337', orderChainId: '31338', adManager: '0x02', orderPortal: '0x03', orderAmount: '1', adAmount: '1' };
const MIN = 60_000;

let server: DevServer;
let lifecycle: RunningWorker;
let orchestrator: TemporalOrchestrator;
let sampler: ProofBacklogSampler;
let memory: ReturnType<typeof memoryActivities>;
const registry = new Registry();

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  server = await startTemporalDevServer(inject('temporalCli'));
  memory = memoryActivities();
  lifecycle = await startLifecycleWorker({ address: server.address, activities: memory.activities });
  orchestrator = await createTemporalOrchestrator({ address: server.address });
  sampler = await startProofBacklogSampler({ registry, address: server.address, namespace: 'default', taskQueue: 'proofs', intervalMs: 60 * MIN, logger: pino({ level: 'silent' }) });
}, 180_000);

afterAll(async () => {
  await sampler?.stop();
  await lifecycle?.stop();
  await orchestrator?.close();
  if (server) await stopped(server.process);
});

/** The gauge's value for the proofs queue, as /metrics would serve it. */
async function backlogGauge(name: string): Promise<number> {
  const metric = await registry.getSingleMetric(name)!.get();
  return metric.values.find((v) => v.labels.task_queue === 'proofs')?.value ?? Number.NaN;
}

describe('the proofs task queue backlog gauge', () => {
  it('rises as deposits queue proofs no prover takes, and falls back to 0 once a prover polls', async () => {
    expect((await sampler.sample()).tasks).toBe(0);
    expect(await backlogGauge('relayer_proof_backlog_tasks')).toBe(0);

    const trades = [randomUUID(), randomUUID(), randomUUID()];
    for (const tradeId of trades) {
      const now = Date.now();
      memory.setDeadlines(tradeId, { reservationExpiresAt: new Date(now + 30 * MIN).toISOString(), lockDeadline: new Date(now + 120 * MIN).toISOString() });
      const trade = { tradeId, adId: randomUUID(), routeId: randomUUID(), reservationExpiresAt: new Date(now + 30 * MIN), lockDeadline: new Date(now + 120 * MIN) };
      await orchestrator.startTrade(trade);
      // As the use case does it: verified, applied, the follow-ups (PROVE) signalled to the workflow.
      const verified = await memory.activities.verifyConfirmation({ tradeId, confirmation: { kind: 'deposit-or-lock', txHash: `deposit-${tradeId}` }, state: INITIAL_STATE, order: ORDER });
      const deposited = await memory.activities.applyEvent({ tradeId, event: verified.event, chainEvent: verified.chainEvent });
      await orchestrator.carryOut(trade, deposited);
      expect(deposited.state).toMatchObject({ status: 'DEPOSITED', proof: 'running' });
    }

    // Temporal's stats are approximate and refreshed by the server every few seconds.
    const backlog = await eventually('three proofs in the backlog', () => sampler.sample(), (b) => b.tasks === 3, 60_000);
    expect(backlog.oldestSeconds).toBeGreaterThan(0);
    expect(await backlogGauge('relayer_proof_backlog_tasks')).toBe(3);
    expect(await backlogGauge('relayer_proof_backlog_oldest_seconds')).toBeGreaterThan(0);

    const prover = await startProverWorker({ address: server.address, generateProof: memory.activities.generateProof, concurrency: 2 });
    try {
      await eventually('the backlog drained', () => sampler.sample(), (b) => b.tasks === 0, 60_000);
      expect(await backlogGauge('relayer_proof_backlog_tasks')).toBe(0);
    } finally {
      await prover.stop();
    }
  }, 180_000);
});
