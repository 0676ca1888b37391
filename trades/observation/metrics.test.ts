import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry, type Histogram } from 'prom-client';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.ts';
import { insertAd, insertRouteWithChains, insertTrade, type RouteFixture } from '../../test/support/fixtures.ts';
import type { AppliedEvent } from '../orchestrator.ts';
import { tradeMetrics } from './metrics.ts';

const PROOF_READY = { type: 'PROOF_READY' } as const;
const applied = (duplicate = false): AppliedEvent => ({
  state: { status: 'DEPOSITED', proof: 'ready', bridgerClaimed: false, adCreatorClaimed: false }, followUps: [], duplicate,
});

let db: TestDatabase;
let route: RouteFixture;
let adId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  route = await insertRouteWithChains(db.knex);
  adId = await insertAd(db.knex, route);
});
afterAll(async () => db?.drop());

/** A trade whose deposit (OrderCreated) was recorded `secondsAgo` ago, by whichever process confirmed it. */
async function depositedTrade(secondsAgo: number): Promise<string> {
  const tradeId = await insertTrade(db.knex, route, adId);
  await db.knex('chain_events').insert({
    chain_id: route.orderChainId, tx_hash: `0x${tradeId.replaceAll('-', '').padEnd(64, '0')}`, log_index: 0, block: 1,
    block_hash: `0x${'b'.repeat(64)}`, event: 'OrderCreated', subject_kind: 'trade', subject_id: tradeId,
    created_at: db.knex.raw(`now() - make_interval(secs => ${secondsAgo})`),
  });
  return tradeId;
}

/** The deposit-to-proof histogram's count and sum in `registry`. */
async function depositToProof(registry: Registry): Promise<{ count: number; sum: number }> {
  const metric = registry.getSingleMetric('relayer_trade_deposit_to_proof_seconds') as Histogram;
  const { values } = await metric.get();
  const value = (name: string) => values.find((v) => v.metricName === name)?.value ?? 0;
  return { count: value('relayer_trade_deposit_to_proof_seconds_count'), sum: value('relayer_trade_deposit_to_proof_seconds_sum') };
}

describe('deposit-to-proof seconds', () => {
  it('are timed from the deposit recorded in the database, so a process that never saw the deposit observes the whole span', async () => {
    const tradeId = await depositedTrade(42);
    // The prover's (or the worker's) own registry: a fresh process with no memory of the deposit.
    const registry = new Registry();
    await tradeMetrics(registry, db.knex).observe(tradeId, applied(), PROOF_READY);
    const { count, sum } = await depositToProof(registry);
    expect(count).toBe(1);
    expect(sum).toBeGreaterThanOrEqual(42);
    // Not a moment of this process's start: the recorded deposit's age, by PostgreSQL's clock.
    expect(sum).toBeLessThan(42 + 600);
  });

  it('take the span the prove step measured (the deposit\'s age read with the trade) without a read of their own', async () => {
    // No deposit recorded for this trade: a read would find nothing and observe nothing.
    const bare = await insertTrade(db.knex, route, adId);
    const registry = new Registry();
    await tradeMetrics(registry, db.knex).observe(bare, { ...applied(), depositToProofSeconds: 7.5 }, PROOF_READY);
    expect(await depositToProof(registry)).toEqual({ count: 1, sum: 7.5 });
  });

  it('observe nothing for a repeated proof-ready or a trade with no recorded deposit', async () => {
    const tradeId = await depositedTrade(5);
    const bare = await insertTrade(db.knex, route, adId);
    const registry = new Registry();
    const metrics = tradeMetrics(registry, db.knex);
    await metrics.observe(tradeId, applied(true), PROOF_READY);
    await metrics.observe(bare, applied(), PROOF_READY);
    expect(await depositToProof(registry)).toEqual({ count: 0, sum: 0 });
  });
});

describe('trade outcomes (the settlement SLO)', () => {
  const state = (status: 'LOCKED' | 'SETTLED' | 'EXPIRED', proof: 'ready' | 'running' = 'ready'): AppliedEvent => ({
    state: { status, proof, bridgerClaimed: status === 'SETTLED', adCreatorClaimed: status === 'SETTLED' }, followUps: [], duplicate: false,
  });
  /** Outcome totals summed over causes. */
  const outcomes = async (registry: Registry) => {
    const totals: Record<string, number> = {};
    for (const v of (await registry.getSingleMetric('relayer_trade_outcomes_total')!.get()).values) totals[v.labels.outcome!] = (totals[v.labels.outcome!] ?? 0) + v.value;
    return totals;
  };
  const byCause = async (registry: Registry) =>
    Object.fromEntries((await registry.getSingleMetric('relayer_trade_outcomes_total')!.get()).values.map((v) => [`${v.labels.outcome}/${v.labels.cause}`, v.value]));

  it('count a deposited trade once when it settles or expires after its deposit; nothing for a reservation that expired undeposited or a repeat', async () => {
    const registry = new Registry();
    const metrics = tradeMetrics(registry, db.knex);
    expect(await outcomes(registry)).toEqual({ settled: 0, expired_unlocked: 0, expired_released: 0 });
    await metrics.observe('t1', state('LOCKED'), { type: 'UNLOCK_CONFIRMED', side: 'ad' });
    await metrics.observe('t1', state('SETTLED'), { type: 'UNLOCK_CONFIRMED', side: 'order' });
    await metrics.observe('t1', { ...state('SETTLED'), duplicate: true }, { type: 'UNLOCK_CONFIRMED', side: 'order' });
    await metrics.observe('t2', state('EXPIRED'), { type: 'LOCK_WINDOW_CLOSED' });
    await metrics.observe('t3', state('EXPIRED'), { type: 'LOCK_RELEASED' });
    await metrics.observe('t4', state('EXPIRED'), { type: 'RESERVATION_EXPIRED' });
    expect(await outcomes(registry)).toEqual({ settled: 1, expired_unlocked: 1, expired_released: 1 });
  });

  it('owes an expiry to the service when the proof was not ready, to the counterparty when it was (a Maker who never locked)', async () => {
    const registry = new Registry();
    const metrics = tradeMetrics(registry, db.knex);
    await metrics.observe('t1', state('EXPIRED', 'running'), { type: 'LOCK_WINDOW_CLOSED' });
    await metrics.observe('t2', state('EXPIRED'), { type: 'LOCK_WINDOW_CLOSED' });
    await metrics.observe('t3', state('EXPIRED'), { type: 'LOCK_WINDOW_CLOSED' });
    await metrics.observe('t4', state('EXPIRED', 'running'), { type: 'LOCK_RELEASED' });
    await metrics.observe('t5', state('SETTLED'), { type: 'UNLOCK_CONFIRMED', side: 'order' });
    expect(await byCause(registry)).toEqual({
      'settled/none': 1, 'expired_unlocked/service': 1, 'expired_unlocked/counterparty': 2, 'expired_released/service': 1, 'expired_released/counterparty': 0,
    });
  });
});

describe('a scrape of the event metrics', () => {
  it('never queries the database: it answers with a knex whose every query fails', async () => {
    const registry = new Registry();
    const failing = new Proxy({}, { get: () => () => Promise.reject(new Error('the database is down')) });
    tradeMetrics(registry, failing as never);
    const began = performance.now();
    const text = await registry.metrics();
    expect(performance.now() - began).toBeLessThan(100);
    expect(text).toContain('relayer_trade_outcomes_total{outcome="settled",cause="none"} 0');
    // Deposits are counted from 0, so the proof SLI's increase() sees the first one.
    expect(text).toContain('relayer_trade_events_total{event="DEPOSIT_CONFIRMED"} 0');
    expect(text).not.toMatch(/^relayer_trades\{/m);
  });
});
