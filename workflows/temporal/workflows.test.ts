import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { NotFinalError } from '../../chains/errors.ts';
import { TradeStateError, TradeTransactionMismatchError } from '../../trades/lifecycle/errors.ts';
import type { TradeState } from '../../trades/lifecycle/index.ts';
import type { AppliedEvent, FollowUpOutbox, StartedTrade, TradeFollowUp } from '../../trades/orchestrator.ts';
import { memoryActivities } from '../../test/support/memory-activities.ts';
import { createTemporalOrchestrator, type TemporalOrchestrator } from './client.ts';
import { startProverWorker } from './prover-worker.ts';
import { bundleTradeWorkflows, startLifecycleWorker, type RunningWorker } from './worker.ts';
import { stateQuery, tradeWorkflowId } from './workflows.ts';

// The trade workflow on Temporal's time-skipping test server (the pinned binary installed by the
// global setup), with in-memory activities over trades/lifecycle.ts that record every call. Each scenario's
// history is written to histories/ when RECORD_HISTORIES=1 (`npm run temporal:histories`);
// replay.test.ts replays them.
const RECORD = process.env.RECORD_HISTORIES === '1';
// This version's histories (histories/v1 to v3 hold the older versions', replayed by replay.test.ts).
const HISTORIES = path.join(import.meta.dirname, 'histories', 'v4');
const MIN = 60_000;

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundleWithSourceMap;
let memory: ReturnType<typeof memoryActivities>;
let orchestrator: TemporalOrchestrator;
const workers: RunningWorker[] = [];

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: inject('temporalTestServer') } } });
  bundle = await bundleTradeWorkflows();
  memory = memoryActivities();
  workers.push(await startLifecycleWorker({ connection: env.nativeConnection, activities: memory.activities, workflowBundle: bundle }));
  workers.push(await startProverWorker({ connection: env.nativeConnection, generateProof: memory.activities.generateProof, concurrency: 2, heartbeatMs: 200 }));
  // The Java test server cannot register custom search attributes: the dev-server test checks them.
  // A start is delayed to the reservation's expiry as the server's clock reads it: time skipped runs it ahead of ours.
  orchestrator = await createTemporalOrchestrator({ connection: env.connection, searchAttributes: false, now: () => Date.now() + serverAhead });
}, 120_000);

let serverAhead = 0;

afterAll(async () => {
  for (const w of workers) await w.stop();
  await env?.teardown();
});

/** Starts a trade whose reservation runs out in 30 min and whose lock window closes in 2 h (server time). */
async function startTrade(times: { ttlMs?: number; lockMs?: number } = {}) {
  const tradeId = randomUUID();
  const now = await env.currentTimeMs();
  serverAhead = now - Date.now();
  const reservationExpiresAt = new Date(now + (times.ttlMs ?? 30 * MIN));
  const lockDeadline = new Date(now + (times.lockMs ?? 120 * MIN));
  memory.setDeadlines(tradeId, { reservationExpiresAt: reservationExpiresAt.toISOString(), lockDeadline: lockDeadline.toISOString() });
  const trade: StartedTrade = { tradeId, adId: randomUUID(), routeId: randomUUID(), reservationExpiresAt, lockDeadline };
  started.set(tradeId, trade);
  await orchestrator.startTrade(trade);
  return { tradeId, handle: env.client.workflow.getHandle(tradeWorkflowId(tradeId)), lockDeadlineSeconds: BigInt(Math.floor(lockDeadline.getTime() / 1000)) };
}

const started = new Map<string, StartedTrade>();
const ORDER = { orderHash: '0x01', adChainId: '31337', orderChainId: '31338', adManager: '0x02', orderPortal: '0x03', orderAmount: '1', adAmount: '1' };
/**
 * A confirm as the use case runs it (trades/service.ts): verified against the stored state, applied,
 * and its follow-ups signalled to the workflow (none for a repeat). The workflow is not its gateway.
 */
async function confirm(tradeId: string, kind: 'deposit-or-lock' | 'unlock', txHash: string): Promise<AppliedEvent> {
  const verified = await memory.activities.verifyConfirmation({ tradeId, confirmation: { kind, txHash }, state: memory.stateOf(tradeId), order: ORDER });
  const applied = await memory.activities.applyEvent({ tradeId, event: verified.event, chainEvent: verified.chainEvent });
  if (!applied.duplicate && !applied.stale) await orchestrator.carryOut(started.get(tradeId)!, applied);
  return applied;
}

/** Polls the workflow's state until `ok` (proofs run on the worker in real time). */
async function until(tradeId: string, ok: (s: TradeState) => boolean): Promise<TradeState> {
  const handle = env.client.workflow.getHandle(tradeWorkflowId(tradeId));
  for (let i = 0; i < 200; i++) {
    const state = await handle.query(stateQuery);
    if (ok(state)) return state;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`trade ${tradeId} never reached the expected state; last ${JSON.stringify(await handle.query(stateQuery))}`);
}

/** The types of the workflow's history events, in order. */
async function eventTypes(handle: WorkflowHandle): Promise<string[]> {
  return (JSON.parse(historyToJSON(await handle.fetchHistory())) as { events: Array<{ eventType: string }> }).events.map((e) => e.eventType);
}

async function record(name: string, tradeId: string) {
  if (!RECORD) return;
  const history = await env.client.workflow.getHandle(tradeWorkflowId(tradeId)).fetchHistory();
  mkdirSync(HISTORIES, { recursive: true });
  writeFileSync(path.join(HISTORIES, `${name}.json`), `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 1)}\n`);
}

describe('the trade workflow (time-skipping test server)', () => {
  it('settles a trade: deposit, proof, lock, both unlocks, and answers a repeated confirm as a duplicate', async () => {
    const { tradeId, handle } = await startTrade();
    const deposited = await confirm(tradeId, 'deposit-or-lock', 'deposit-1');
    expect(deposited).toMatchObject({ duplicate: false, state: { status: 'DEPOSITED', proof: 'running' } });
    await until(tradeId, (s) => s.proof === 'ready');
    expect((await confirm(tradeId, 'deposit-or-lock', 'lock-1')).state.status).toBe('LOCKED');
    expect((await confirm(tradeId, 'unlock', 'unlock-ad-1')).state).toMatchObject({ status: 'LOCKED', bridgerClaimed: true });
    const settled = await confirm(tradeId, 'unlock', 'unlock-order-1');
    expect(settled).toMatchObject({ duplicate: false, state: { status: 'SETTLED', proof: 'ready', bridgerClaimed: true, adCreatorClaimed: true } });

    // The workflow closes at END with the settled state; a repeated confirm is answered without it.
    expect(await handle.result()).toEqual(settled.state);
    const again = await confirm(tradeId, 'unlock', 'unlock-order-1');
    expect(again).toMatchObject({ duplicate: true, state: { status: 'SETTLED' } });
    // Signalled twice (the deposit's timer and proof, the end): the lock's lone timer cancel and the
    // first unlock change nothing the workflow does. The start waited for the reservation's expiry
    // with no task; the deposit's signal-with-start ran the first task, in which the reservation's
    // timer was cancelled before it started (no timer event). The lock window's timer is left to
    // the server at the close. (Workflow tasks are not counted here: the Java test server schedules
    // one more after a signal-with-start ends a delay than the dev server does; bench:trades counts
    // the dev server's.)
    const events = await eventTypes(handle);
    const count = (type: string) => events.filter((e) => e === `EVENT_TYPE_${type}`).length;
    expect({ signals: count('WORKFLOW_EXECUTION_SIGNALED'), started: count('TIMER_STARTED'), cancelled: count('TIMER_CANCELED'),
      fired: count('TIMER_FIRED'), upserts: count('UPSERT_WORKFLOW_SEARCH_ATTRIBUTES') })
      .toEqual({ signals: 2, started: 1, cancelled: 0, fired: 0, upserts: 1 });
    expect(memory.callsOf(tradeId)).toEqual([
      'verifyConfirmation:DEPOSIT_CONFIRMED:verified', 'applyEvent:DEPOSIT_CONFIRMED:PROVE',
      'generateProof:proved',
      'verifyConfirmation:LOCK_CONFIRMED:verified', 'applyEvent:LOCK_CONFIRMED:RESERVATION_TO_LOCK',
      'verifyConfirmation:UNLOCK_CONFIRMED:verified', 'applyEvent:UNLOCK_CONFIRMED:PAY_OUT_LOCK',
      'verifyConfirmation:UNLOCK_CONFIRMED:verified', 'applyEvent:UNLOCK_CONFIRMED:applied',
      'verifyConfirmation:UNLOCK_CONFIRMED:recorded', 'applyEvent:UNLOCK_CONFIRMED:duplicate',
    ]);
    await record('settled', tradeId);
  });

  it('leaves the lock window timer armed after the lock: it fires stale, changes nothing, and the trade still settles', async () => {
    const { tradeId, handle } = await startTrade({ lockMs: 60 * MIN });
    await confirm(tradeId, 'deposit-or-lock', 'deposit-stale');
    await until(tradeId, (s) => s.proof === 'ready');
    expect((await confirm(tradeId, 'deposit-or-lock', 'lock-stale')).state.status).toBe('LOCKED');
    await env.sleep(61 * MIN);
    await until(tradeId, (s) => s.status === 'LOCKED');
    expect(memory.callsOf(tradeId).filter((c) => c.includes('CLOSED'))).toEqual(['applyEvent:LOCK_WINDOW_CLOSED:stale']);
    expect(memory.stateOf(tradeId)).toMatchObject({ status: 'LOCKED', proof: 'ready' });
    await confirm(tradeId, 'unlock', 'unlock-ad-stale');
    const settled = await confirm(tradeId, 'unlock', 'unlock-order-stale');
    expect(await handle.result()).toEqual(settled.state);
    expect(memory.callsOf(tradeId).some((c) => c.includes('RELEASE_RESERVATION'))).toBe(false);
  });

  it('expires an undeposited reservation after the TTL and releases it once; a later deposit is refused', async () => {
    const { tradeId, handle } = await startTrade({ ttlMs: 30 * MIN });
    await env.sleep(29 * MIN);
    // The start waits for the reservation's expiry: no task, no timer, the trade untouched.
    expect(await eventTypes(handle)).toEqual(['EVENT_TYPE_WORKFLOW_EXECUTION_STARTED']);
    expect(memory.stateOf(tradeId).status).toBe('PENDING');
    await env.sleep(2 * MIN);
    expect((await handle.result()).status).toBe('EXPIRED');
    // The first task found the reservation's timer due and applied it: no timer was started.
    expect((await eventTypes(handle)).filter((e) => e.startsWith('EVENT_TYPE_TIMER'))).toEqual([]);
    const late = await confirm(tradeId, 'deposit-or-lock', 'deposit-late').catch((e: unknown) => e);
    expect(late).toBeInstanceOf(TradeStateError);
    expect(late).toMatchObject({ code: 'TRADE_STATE', kind: 'conflict', retryable: false });
    expect(memory.callsOf(tradeId).filter((c) => c.includes('RELEASE_RESERVATION'))).toEqual(['applyEvent:RESERVATION_EXPIRED:RELEASE_RESERVATION']);
    await record('expired', tradeId);
  });

  it('retries a proof that fails once, then marks it ready', async () => {
    memory.failProofs(1);
    const { tradeId, handle } = await startTrade();
    await confirm(tradeId, 'deposit-or-lock', 'deposit-retry');
    await until(tradeId, (s) => s.proof === 'ready');
    expect(memory.callsOf(tradeId).filter((c) => c.startsWith('generateProof'))).toEqual(['generateProof:TREE_OUT_OF_SYNC', 'generateProof:proved']);
    await record('proof-retried', tradeId);
    await handle.terminate('test over');
  });

  it('rejects a bad deposit with the mismatch error and changes nothing; a transaction not final yet is retryable', async () => {
    const { tradeId, handle } = await startTrade();
    const bad = await confirm(tradeId, 'deposit-or-lock', '0xnot-this-order').catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(TradeTransactionMismatchError);
    expect(bad).toMatchObject({ code: 'TRADE_TX_MISMATCH', kind: 'invalid', retryable: false, field: 'txHash' });
    const early = await confirm(tradeId, 'deposit-or-lock', 'notfinal-1').catch((e: unknown) => e);
    expect(early).toBeInstanceOf(NotFinalError);
    expect(early).toMatchObject({ code: 'NOT_FINAL', kind: 'not_ready', retryable: true, confirmations: 0, required: 1 });
    // Verified once each (no retry of a verdict), nothing applied, state as it was.
    expect(memory.callsOf(tradeId)).toEqual(['verifyConfirmation:TRADE_TX_MISMATCH', 'verifyConfirmation:NOT_FINAL']);
    // Nothing was signalled: the workflow still waits for the reservation's expiry, its start alone in its history.
    expect(await eventTypes(handle)).toEqual(['EVENT_TYPE_WORKFLOW_EXECUTION_STARTED']);
    expect(memory.stateOf(tradeId).status).toBe('PENDING');
    // The trade still goes on.
    expect((await confirm(tradeId, 'deposit-or-lock', 'deposit-after-bad')).state.status).toBe('DEPOSITED');
    await until(tradeId, (s) => s.proof === 'ready');
    await record('bad-deposit', tradeId);
    await handle.terminate('test over');
  });

  it('answers a repeated deposit confirm as a duplicate and proves once', async () => {
    const { tradeId, handle } = await startTrade();
    const [first, second] = await Promise.all([confirm(tradeId, 'deposit-or-lock', 'deposit-dup'), confirm(tradeId, 'deposit-or-lock', 'deposit-dup')]);
    expect([first.duplicate, second.duplicate].sort()).toEqual([false, true]);
    await until(tradeId, (s) => s.proof === 'ready');
    expect(memory.callsOf(tradeId).filter((c) => c.startsWith('generateProof'))).toEqual(['generateProof:proved']);
    await record('duplicate-deposit', tradeId);
    await handle.terminate('test over');
  });

  it('expires a deposited trade when the lock window closes without a lock; a later lock is refused', async () => {
    const { tradeId, handle } = await startTrade({ lockMs: 60 * MIN });
    await confirm(tradeId, 'deposit-or-lock', 'deposit-nolock');
    await until(tradeId, (s) => s.proof === 'ready');
    await env.sleep(61 * MIN);
    await until(tradeId, (s) => s.status === 'EXPIRED');
    const late = await confirm(tradeId, 'deposit-or-lock', 'lock-late').catch((e: unknown) => e);
    expect(late).toBeInstanceOf(TradeStateError);
    expect((await handle.result()).status).toBe('EXPIRED');
    expect(memory.callsOf(tradeId).filter((c) => c.includes('RELEASE_RESERVATION') || c.includes('CLOSED'))).toEqual(['applyEvent:LOCK_WINDOW_CLOSED:RELEASE_RESERVATION']);
    await record('lock-window-closed', tradeId);
  });

  it('looks at the lock window again while the ad chain has not passed the deadline, and takes the lock it then finds instead of expiring', async () => {
    const { tradeId, handle, lockDeadlineSeconds: deadline } = await startTrade({ lockMs: 60 * MIN });
    memory.setLockWindow(tradeId, { readable: true, locked: false, chainTime: deadline - 600n });
    await confirm(tradeId, 'deposit-or-lock', 'deposit-latelock');
    await until(tradeId, (s) => s.proof === 'ready');
    await env.sleep(61 * MIN);
    // The service's deadline passed, the chain's did not: still DEPOSITED, nothing released, the window looked at again.
    expect((await handle.query(stateQuery)).status).toBe('DEPOSITED');
    expect(memory.callsOf(tradeId).filter((c) => c.includes('CLOSED')).length).toBeGreaterThan(1);
    expect(memory.callsOf(tradeId).filter((c) => c.includes('CLOSED')).every((c) => c === 'applyEvent:LOCK_WINDOW_CLOSED:put off')).toBe(true);
    // The Maker's lock is on chain now (mined before the chain's deadline, reported by nobody): the next look takes it.
    memory.setLockWindow(tradeId, { readable: true, locked: true, chainTime: deadline + 5n });
    await env.sleep(MIN);
    await until(tradeId, (s) => s.status === 'LOCKED');
    expect(memory.callsOf(tradeId)).toContain('applyEvent:LOCK_CONFIRMED:RESERVATION_TO_LOCK');
    expect(memory.callsOf(tradeId).some((c) => c.includes('RELEASE_RESERVATION'))).toBe(false);
    await handle.terminate('test over');
  });

  it('expires a deposited trade once the ad chain\'s time passes the lock deadline with no lock', async () => {
    const { tradeId, handle, lockDeadlineSeconds: deadline } = await startTrade({ lockMs: 60 * MIN });
    memory.setLockWindow(tradeId, { readable: true, locked: false, chainTime: deadline - 600n });
    await confirm(tradeId, 'deposit-or-lock', 'deposit-chainclose');
    await until(tradeId, (s) => s.proof === 'ready');
    await env.sleep(61 * MIN);
    expect((await handle.query(stateQuery)).status).toBe('DEPOSITED');
    memory.setLockWindow(tradeId, { readable: true, locked: false, chainTime: deadline + 1n });
    await env.sleep(MIN);
    await until(tradeId, (s) => s.status === 'EXPIRED');
    expect(memory.callsOf(tradeId).filter((c) => c.includes('RELEASE_RESERVATION'))).toEqual(['applyEvent:LOCK_WINDOW_CLOSED:RELEASE_RESERVATION']);
    expect((await handle.result()).status).toBe('EXPIRED');
  });

  it('refuses an unlock before the lock without asking a chain, and the deposit sent as an unlock; nothing changes', async () => {
    const { tradeId, handle } = await startTrade();
    const early = await confirm(tradeId, 'unlock', 'unlock-ad-early').catch((e: unknown) => e);
    expect(early).toBeInstanceOf(TradeStateError);
    await confirm(tradeId, 'deposit-or-lock', 'deposit-kind');
    const wrongKind = await confirm(tradeId, 'unlock', 'deposit-kind').catch((e: unknown) => e);
    expect(wrongKind).toBeInstanceOf(TradeTransactionMismatchError);
    expect(memory.callsOf(tradeId).filter((c) => c.startsWith('verifyConfirmation'))).toEqual([
      'verifyConfirmation:TRADE_STATE', 'verifyConfirmation:DEPOSIT_CONFIRMED:verified', 'verifyConfirmation:TRADE_TX_MISMATCH',
    ]);
    expect(memory.stateOf(tradeId).status).toBe('DEPOSITED');
    await handle.terminate('test over');
  });

  it('sweeps pending follow-ups: a lone timer cancel is marked carried out with no signal, a timer to arm is signalled', async () => {
    const { tradeId, handle } = await startTrade();
    await confirm(tradeId, 'deposit-or-lock', 'deposit-sweep');
    await until(tradeId, (s) => s.proof === 'ready');
    const signals = async () => (JSON.parse(historyToJSON(await handle.fetchHistory())) as { events: Array<{ eventType: string }> }).events
      .filter((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED').length;
    const before = await signals();
    // The outbox's interface over rows in memory (the PostgreSQL one needs a database this file does not start).
    const trade = started.get(tradeId)!;
    let rows: Array<{ seq: number; tradeId: string; followUp: TradeFollowUp; trade: StartedTrade }> = [
      { seq: 1, tradeId, followUp: { type: 'CANCEL_TIMER', event: 'LOCK_WINDOW_CLOSED' }, trade },
    ];
    const marked: number[] = [];
    const outbox: FollowUpOutbox = {
      pending: async () => rows,
      markCarriedOut: async (seqs) => {
        marked.push(...seqs);
        rows = rows.filter((r) => !seqs.includes(r.seq));
      },
    };
    const sweeper = await createTemporalOrchestrator({ connection: env.connection, searchAttributes: false, outbox });
    expect(await sweeper.sweep(0)).toBe(1);
    expect(marked).toEqual([1]);
    expect(await signals()).toBe(before);
    rows = [{ seq: 2, tradeId, followUp: { type: 'ARM_TIMER', event: 'LOCK_WINDOW_CLOSED', at: trade.lockDeadline.toISOString() }, trade }];
    expect(await sweeper.sweep(0)).toBe(1);
    expect(marked).toEqual([1, 2]);
    expect(await signals()).toBe(before + 1);
    await sweeper.close();
    await handle.terminate('test over');
  });

  // Last: the Java test server stops skipping time after it refused a duplicate start.
  it('starting a trade twice runs one workflow', async () => {
    const { tradeId, handle } = await startTrade();
    const { runId } = await handle.describe();
    const now = await env.currentTimeMs();
    await orchestrator.startTrade({ tradeId, adId: randomUUID(), routeId: randomUUID(), reservationExpiresAt: new Date(now + MIN), lockDeadline: new Date(now + 2 * MIN) });
    expect((await handle.describe()).runId).toBe(runId);
    await handle.terminate('test over');
  });
});
