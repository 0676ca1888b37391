import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { followUpsOf, isTerminal, resume } from '../../trades/lifecycle/index.ts';
import type { FollowUpOutbox, Orchestrator, StartedTrade, TradeActivities } from '../../trades/orchestrator.ts';
import type { ResumableTrade } from '../../trades/resume.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.ts';
import { eventually } from '../../test/support/devnet-client.ts';
import { memoryActivities } from '../../test/support/memory-activities.ts';
import { startEmbeddedOrchestrator } from './orchestrator.ts';

/**
 * The embedded runner on a real PostgreSQL (pg-boss), over the in-memory activities (a double of
 * trades/activities.ts named as such): a reservation's expiry timer whose job pg-boss gave up on
 * during an outage (every retry failed) is armed again once the outage ends, so the reservation
 * still expires, on the runner's schedule and after a restart.
 */

const logger = pino({ level: 'silent' });
let db: TestDatabase;
const running: Orchestrator[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((o) => o.close()));
});
afterAll(async () => {
  await db?.drop();
});

/** Memory activities whose applyEvent fails while `down` (the database or the chain unreachable). */
function outageActivities() {
  const memory = memoryActivities();
  const outage = { down: false, failures: 0 };
  const activities: TradeActivities = {
    ...memory.activities,
    async applyEvent(input) {
      if (outage.down) {
        outage.failures++;
        throw new Error('connect ECONNREFUSED (the outage)');
      }
      return memory.activities.applyEvent(input);
    },
  };
  /** Open trades with their resume follow-ups, as trades/resume.ts reads them from the database. */
  const openTrades = (ids: string[]) => async (): Promise<ResumableTrade[]> => ids
    .filter((id) => !isTerminal(memory.stateOf(id)))
    .map((tradeId) => ({ tradeId, followUps: followUpsOf(resume(memory.stateOf(tradeId)), deadlinesOf(tradeId)) }));
  const deadlines = new Map<string, { reservationExpiresAt: string; lockDeadline: string }>();
  const deadlinesOf = (id: string) => deadlines.get(id)!;
  return {
    memory, outage, activities, openTrades,
    /** A trade whose reservation expires `inMs` from now. */
    newTrade(tradeId: string, inMs: number, lockInMs = 3_600_000) {
      const times = { reservationExpiresAt: new Date(Date.now() + inMs).toISOString(), lockDeadline: new Date(Date.now() + lockInMs).toISOString() };
      deadlines.set(tradeId, times);
      memory.setDeadlines(tradeId, times);
      return { tradeId, adId: 'ad', routeId: 'route', reservationExpiresAt: new Date(times.reservationExpiresAt), lockDeadline: new Date(times.lockDeadline) };
    },
  };
}

async function timerJobStates(tradeId: string): Promise<string[]> {
  return (await db.knex('pgboss.job').where({ name: 'trade-timer' }).whereRaw("data->>'tradeId' = ?", [tradeId]).select('state')).map((r) => r.state);
}

/** The memory activities write no outbox rows: nothing is ever pending. */
const emptyOutbox: FollowUpOutbox = { pending: async () => [], markCarriedOut: async () => undefined };

async function start(world: ReturnType<typeof outageActivities>, ids: string[], resumeIntervalMs: number, proveConcurrency?: number) {
  const orchestrator = await startEmbeddedOrchestrator({
    databaseUrl: db.url, activities: world.activities, outbox: emptyOutbox, logger, openTrades: world.openTrades(ids), resumeIntervalMs, jobRetryLimit: 1, proveConcurrency,
  });
  running.push(orchestrator);
  return orchestrator;
}

const ORDER = { orderHash: '0x01', adChainId: '31338', orderChainId: '31337', adManager: '0xad', orderPortal: '0x0p', orderAmount: '100', adAmount: '100' };

/** A deposit confirmed as the use case does it (trades/service.ts): verified, applied, its follow-ups handed to the orchestrator. */
async function confirmDeposit(world: ReturnType<typeof outageActivities>, orchestrator: Orchestrator, trade: StartedTrade) {
  const { tradeId } = trade;
  const verified = await world.activities.verifyConfirmation({
    tradeId, confirmation: { kind: 'deposit-or-lock', txHash: `deposit-${tradeId}` }, state: world.memory.stateOf(tradeId), order: ORDER,
  });
  const applied = await world.activities.applyEvent({ tradeId, event: verified.event, chainEvent: verified.chainEvent });
  await orchestrator.carryOut(trade, applied);
}

describe('a reservation timer given up during an outage', () => {
  it('is armed again on the runner schedule once the outage ends, and the reservation expires', async () => {
    const world = outageActivities();
    const trade = world.newTrade('11111111-1111-4111-8111-111111111111', 200);
    const orchestrator = await start(world, [trade.tradeId], 1_000);
    world.outage.down = true;
    await orchestrator.startTrade(trade);
    // pg-boss tried it and every retry failed: the job is failed, the trade still reserved.
    await eventually('the timer job failed', () => timerJobStates(trade.tradeId), (states) => states.includes('failed'), 30_000);
    // Every try failed (pg-boss's two; the schedule may have armed it again meanwhile: the outage goes on).
    expect(world.outage.failures).toBeGreaterThanOrEqual(2);
    expect(world.memory.stateOf(trade.tradeId).status).toBe('PENDING');

    world.outage.down = false;
    await eventually('the reservation expired', async () => world.memory.stateOf(trade.tradeId), (s) => s.status === 'EXPIRED', 30_000);
    expect(world.memory.callsOf(trade.tradeId)).toEqual(['applyEvent:RESERVATION_EXPIRED:RELEASE_RESERVATION']);
  });

  it('is armed again when the runner restarts after the outage, and the reservation expires', async () => {
    const world = outageActivities();
    const trade = world.newTrade('22222222-2222-4222-8222-222222222222', 200);
    const first = await start(world, [trade.tradeId], 0);
    world.outage.down = true;
    await first.startTrade(trade);
    await eventually('the timer job failed', () => timerJobStates(trade.tradeId), (states) => states.includes('failed'), 30_000);
    await first.close();

    world.outage.down = false;
    await start(world, [trade.tradeId], 0);
    await eventually('the reservation expired', async () => world.memory.stateOf(trade.tradeId), (s) => s.status === 'EXPIRED', 30_000);
    expect(world.memory.callsOf(trade.tradeId)).toEqual(['applyEvent:RESERVATION_EXPIRED:RELEASE_RESERVATION']);
  });

  it('leaves a timer that is still waiting alone: the reservation expires once, at its time', async () => {
    const world = outageActivities();
    const trade = world.newTrade('33333333-3333-4333-8333-333333333333', 3_000);
    const orchestrator = await start(world, [trade.tradeId], 300);
    await orchestrator.startTrade(trade);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await timerJobStates(trade.tradeId)).toEqual(['created']);
    expect(world.memory.stateOf(trade.tradeId).status).toBe('PENDING');
    await eventually('the reservation expired', async () => world.memory.stateOf(trade.tradeId), (s) => s.status === 'EXPIRED', 30_000);
    expect(world.memory.callsOf(trade.tradeId)).toEqual(['applyEvent:RESERVATION_EXPIRED:RELEASE_RESERVATION']);
  });
});

/**
 * Holds each of the world's proofs until two are in hand at once (or 10 s: taken one at a time, the
 * first waits out the 10 s alone); `most` is the most proofs seen in hand at once.
 */
function proofsHeldInPairs(world: ReturnType<typeof outageActivities>) {
  let inFlight = 0;
  let most = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => { release = resolve; });
  const prove = world.activities.generateProof;
  world.activities.generateProof = async (input) => {
    most = Math.max(most, ++inFlight);
    if (most === 2) release();
    await Promise.race([released, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    inFlight--;
    return prove(input);
  };
  return { most: () => most };
}

describe('proofs', () => {
  it('runs as many proofs at once as it is given workers, each applied once', async () => {
    const world = outageActivities();
    const ids = ['44444444-4444-4444-8444-444444444444', '55555555-5555-4555-8555-555555555555'];
    const pair = proofsHeldInPairs(world);
    const trades = ids.map((tradeId) => world.newTrade(tradeId, 3_600_000));
    const orchestrator = await start(world, ids, 0, 2);
    for (const trade of trades) {
      await orchestrator.startTrade(trade);
      await confirmDeposit(world, orchestrator, trade);
    }
    for (const tradeId of ids) {
      await eventually('proof ready', async () => world.memory.stateOf(tradeId), (s) => s.proof === 'ready', 30_000);
      expect(world.memory.callsOf(tradeId).filter((c) => c.startsWith('generateProof'))).toEqual(['generateProof:proved']);
    }
    expect(pair.most()).toBe(2);
  });
});

describe('a backlog of proofs', () => {
  it('is drained without a polling pause between proofs: a worker that finished one takes the next at once', async () => {
    const world = outageActivities();
    const ids = ['a1111111-1111-4111-8111-111111111111', 'a2222222-2222-4222-8222-222222222222', 'a3333333-3333-4333-8333-333333333333',
      'a4444444-4444-4444-8444-444444444444', 'a5555555-5555-4555-8555-555555555555'];
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const runs: Array<{ started: number; ended: number }> = [];
    const prove = world.activities.generateProof;
    world.activities.generateProof = async (input) => {
      const run = { started: performance.now(), ended: 0 };
      // The first proof is held until every deposit is queued behind it.
      if (runs.push(run) === 1) await held;
      const applied = await prove(input);
      run.ended = performance.now();
      return applied;
    };
    const trades = ids.map((tradeId) => world.newTrade(tradeId, 3_600_000));
    const orchestrator = await start(world, ids, 0, 1);
    for (const trade of trades) {
      await orchestrator.startTrade(trade);
      await confirmDeposit(world, orchestrator, trade);
    }
    await eventually('the first proof running', async () => runs.length, (n) => n >= 1, 30_000);
    release();
    for (const tradeId of ids) await eventually('proof ready', async () => world.memory.stateOf(tradeId), (s) => s.proof === 'ready', 30_000);
    expect(runs).toHaveLength(ids.length);
    // Between one proof's end and the next one's start: the job's completion and the next fetch,
    // not the rest of a polling interval (pg-boss's wait before it looks again: 0.5 s and more).
    const pauses = runs.slice(1).map((run, i) => Math.round(run.started - runs[i]!.ended));
    expect(Math.max(...pauses), `pauses ${pauses.join(', ')} ms`).toBeLessThan(300);
  });
});

describe('a proof pool of one', () => {
  it('takes one proof more than the pool runs, prepared while the pool proves', async () => {
    const world = outageActivities();
    const ids = ['b1111111-1111-4111-8111-111111111111', 'b2222222-2222-4222-8222-222222222222'];
    const pair = proofsHeldInPairs(world);
    const trades = ids.map((tradeId) => world.newTrade(tradeId, 3_600_000));
    const orchestrator = await start(world, ids, 0, 1);
    const started = performance.now();
    for (const trade of trades) {
      await orchestrator.startTrade(trade);
      await confirmDeposit(world, orchestrator, trade);
    }
    for (const tradeId of ids) await eventually('proof ready', async () => world.memory.stateOf(tradeId), (s) => s.proof === 'ready', 30_000);
    expect(pair.most()).toBe(2);
    expect(performance.now() - started).toBeLessThan(8_000);
  });
});

describe('a proof given up during an outage', () => {
  it('is queued again on the runner schedule once the outage ends, and becomes ready once', async () => {
    const world = outageActivities();
    const tradeId = '66666666-6666-4666-8666-666666666666';
    const trade = world.newTrade(tradeId, 3_600_000);
    // Every try fails while the outage lasts (pg-boss tries twice here, then gives the job up).
    world.memory.failProofs(1_000);
    const orchestrator = await start(world, [tradeId], 1_000);
    await orchestrator.startTrade(trade);
    await confirmDeposit(world, orchestrator, trade);
    await eventually('the prove job failed', async () => (await db.knex('pgboss.job').where({ name: 'trade-prove' }).whereRaw("data->>'tradeId' = ?", [tradeId]).pluck('state')),
      (states) => states.includes('failed'), 30_000);
    expect(world.memory.stateOf(tradeId).proof).toBe('running');

    world.memory.failProofs(0);
    await eventually('the proof is ready', async () => world.memory.stateOf(tradeId), (s) => s.proof === 'ready', 30_000);
    // Proved and made ready once (one transaction): the failed tries proved nothing.
    expect(world.memory.callsOf(tradeId).filter((c) => c.startsWith('generateProof:proved'))).toEqual(['generateProof:proved']);
  });
});

describe('a lock window the ad chain has not closed when its timer fires', () => {

  it('is looked at again by a job of its own until the chain shows the lock, which the trade then takes', async () => {
    const world = outageActivities();
    const tradeId = '77777777-7777-4777-8777-777777777777';
    const trade = world.newTrade(tradeId, 3_600_000, 1_000);
    // The chain a second behind the deadline with no lock: each look puts the window off 2 s.
    world.memory.setLockWindow(tradeId, { readable: true, locked: false, chainTime: BigInt(Math.floor(trade.lockDeadline.getTime() / 1000)) - 1n });
    const orchestrator = await start(world, [tradeId], 0);
    await orchestrator.startTrade(trade);
    await confirmDeposit(world, orchestrator, trade);
    await eventually('looked at twice', async () => world.memory.callsOf(tradeId).filter((c) => c === 'applyEvent:LOCK_WINDOW_CLOSED:put off').length, (n) => n >= 2, 30_000);
    expect(world.memory.stateOf(tradeId).status).toBe('DEPOSITED');

    world.memory.setLockWindow(tradeId, { readable: true, locked: true, chainTime: BigInt(Math.floor(Date.now() / 1000)) });
    await eventually('the lock taken', async () => world.memory.stateOf(tradeId), (s) => s.status === 'LOCKED', 30_000);
    expect(world.memory.callsOf(tradeId).filter((c) => c.includes('RELEASE_RESERVATION'))).toEqual([]);
    expect(world.memory.callsOf(tradeId)).toContain('applyEvent:LOCK_CONFIRMED:RESERVATION_TO_LOCK');
  });

  it('is looked at again on the runner schedule when its next look was lost, and closes once the chain passes the deadline', async () => {
    const world = outageActivities();
    const tradeId = '88888888-8888-4888-8888-888888888888';
    const trade = world.newTrade(tradeId, 3_600_000, 1_000);
    const deadline = BigInt(Math.floor(trade.lockDeadline.getTime() / 1000));
    world.memory.setLockWindow(tradeId, { readable: true, locked: false, chainTime: deadline - 1n });
    const orchestrator = await start(world, [tradeId], 500);
    await orchestrator.startTrade(trade);
    await confirmDeposit(world, orchestrator, trade);
    await eventually('put off', async () => world.memory.callsOf(tradeId), (calls) => calls.includes('applyEvent:LOCK_WINDOW_CLOSED:put off'), 30_000);
    // The next look's job is gone (as if pg-boss had given it up and archived it): only the schedule can arm it again.
    world.memory.setLockWindow(tradeId, { readable: true, locked: false, chainTime: deadline + 1n });
    await eventually('the next look armed', () => timerJobStates(tradeId), (states) => states.includes('created'), 30_000);
    await db.knex('pgboss.job').where({ name: 'trade-timer' }).whereRaw("data->>'tradeId' = ?", [tradeId]).whereIn('state', ['created', 'retry']).delete();
    expect(await timerJobStates(tradeId)).not.toContain('created');
    await eventually('the window closed', async () => world.memory.stateOf(tradeId), (s) => s.status === 'EXPIRED', 30_000);
    expect(world.memory.callsOf(tradeId).filter((c) => c.includes('RELEASE_RESERVATION'))).toEqual(['applyEvent:LOCK_WINDOW_CLOSED:RELEASE_RESERVATION']);
  });
});

describe('follow-ups carried out inside the transaction that applies their event', () => {
  it('exist exactly when that transaction commits, and a timer armed so fires at its time', async () => {
    const world = outageActivities();
    const trade = world.newTrade('c1111111-1111-4111-8111-111111111111', 2_000);
    // No open trades to resume: every timer job of this trade is one this test arms.
    const orchestrator = await start(world, [], 0);
    const arm = [{ type: 'ARM_TIMER' as const, event: 'RESERVATION_EXPIRED' as const, at: trade.reservationExpiresAt.toISOString() }];
    await expect(db.knex.transaction(async (trx) => {
      await orchestrator.carryOutWithin!(trx, trade.tradeId, arm);
      throw new Error('the event did not apply');
    })).rejects.toThrow('the event did not apply');
    expect(await timerJobStates(trade.tradeId)).toEqual([]);
    await db.knex.transaction((trx) => orchestrator.carryOutWithin!(trx, trade.tradeId, arm));
    expect(await timerJobStates(trade.tradeId)).toEqual(['created']);
    // After the commit the applier hands the event over marked as carried: only the wake is left.
    await orchestrator.carryOut(trade, { state: world.memory.stateOf(trade.tradeId), followUps: arm, duplicate: false, carriedWithin: true });
    expect(await timerJobStates(trade.tradeId)).toEqual(['created']);
    await eventually('the reservation expired', async () => world.memory.stateOf(trade.tradeId), (s) => s.status === 'EXPIRED', 30_000);
    expect(world.memory.callsOf(trade.tradeId)).toEqual(['applyEvent:RESERVATION_EXPIRED:RELEASE_RESERVATION']);
  });
});
