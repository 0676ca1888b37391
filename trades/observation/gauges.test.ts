import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionLeaderLock } from '../../db/leader-lock.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.ts';
import { insertAd, insertRouteWithChains, insertTrade, type RouteFixture } from '../../test/support/fixtures.ts';
import { TRADE_GAUGE_NAMES, tradeGaugeSampler, type TradeGaugeSampler } from './gauges.ts';

const logger = pino({ level: 'silent' });
let db: TestDatabase;
let route: RouteFixture;
let adId: string;
const samplers: TradeGaugeSampler[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  route = await insertRouteWithChains(db.knex);
  adId = await insertAd(db.knex, route);
});
afterAll(async () => {
  for (const sampler of samplers) await sampler.stop();
  await db?.drop();
});

/** A sampler over the test database as one process would run it (its own registry, its own lock session). */
function process_(lockName: string) {
  const registry = new Registry();
  const sampler = tradeGaugeSampler({ registry, knex: db.knex, lock: sessionLeaderLock(db.url, lockName), intervalMs: 60_000, logger });
  samplers.push(sampler);
  return { registry, sampler };
}

const served = (registry: Registry) => registry.getMetricsAsArray().map((m) => m.name).filter((name) => (TRADE_GAUGE_NAMES as readonly string[]).includes(name)).sort();
const value = async (registry: Registry, name: string, labels: Record<string, string> = {}) =>
  (await registry.getSingleMetric(name)!.get()).values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;

/** A trade deposited `secondsAgo` (its OrderCreated recorded then), its proof in `proofState`. */
async function depositedTrade(secondsAgo: number, proofState: 'running' | 'ready'): Promise<string> {
  const tradeId = await insertTrade(db.knex, route, adId);
  await db.knex('trades').where({ id: tradeId }).update({ status: 'DEPOSITED', proof_state: proofState });
  await db.knex('chain_events').insert({
    chain_id: route.orderChainId, tx_hash: `0x${tradeId.replaceAll('-', '').padEnd(64, '0')}`, log_index: 0, block: 1,
    block_hash: `0x${'b'.repeat(64)}`, event: 'OrderCreated', subject_kind: 'trade', subject_id: tradeId,
    created_at: db.knex.raw(`now() - make_interval(secs => ${secondsAgo})`),
  });
  return tradeId;
}

describe('the trade gauges sampler', () => {
  it('one process of several leads: it reads and serves the gauges, the others serve none; the next takes over when it stops', async () => {
    const lock = `test:${randomUUID()}`;
    const a = process_(lock);
    const b = process_(lock);
    expect(await a.sampler.sample()).toBe('leading');
    expect(await b.sampler.sample()).toBe('following');
    expect(served(a.registry)).toEqual([...TRADE_GAUGE_NAMES].sort());
    expect(served(b.registry)).toEqual([]);
    // The follower's text has none of them (no stale or empty copy to confuse a max() or an alert).
    expect(await b.registry.metrics()).not.toMatch(/relayer_trade/);

    await a.sampler.stop();
    expect(served(a.registry)).toEqual([]);
    expect(await b.sampler.sample()).toBe('leading');
    expect(served(b.registry)).toEqual([...TRADE_GAUGE_NAMES].sort());
    expect(await value(b.registry, 'relayer_trade_gauges_age_seconds')).toBeLessThan(5);
  });

  it('a leader whose session PostgreSQL ends (its connection cut) hands over: the next round another leads, and it serves nothing', async () => {
    const lock = `test:${randomUUID()}`;
    const a = process_(lock);
    const b = process_(lock);
    expect(await a.sampler.sample()).toBe('leading');
    expect(await b.sampler.sample()).toBe('following');
    const holders = await db.knex('pg_locks').where({ locktype: 'advisory', granted: true })
      .whereRaw('objid = (hashtextextended(?, 0) & 4294967295)::oid', [lock]).pluck('pid');
    expect(holders).toHaveLength(1);
    // With a timeout, pg_terminate_backend waits for the session to end (and its lock with it).
    await db.knex.raw('SELECT pg_terminate_backend(?, 5000)', [holders[0]]);
    expect(await b.sampler.sample()).toBe('leading');
    // The former leader reconnects and finds the role taken: it drops its gauges.
    expect(await a.sampler.sample()).toBe('following');
    expect(served(a.registry)).toEqual([]);
    expect(served(b.registry)).toEqual([...TRADE_GAUGE_NAMES].sort());
  });

  it('times the oldest deposit whose proof is not ready; a deposit with its proof ready, however old, does not count', async () => {
    const { registry, sampler } = process_(`test:${randomUUID()}`);
    await depositedTrade(7200, 'ready');
    await sampler.sample();
    expect(await value(registry, 'relayer_trades_awaiting_proof_oldest_seconds')).toBe(0);
    await depositedTrade(900, 'running');
    await depositedTrade(30, 'running');
    await sampler.sample();
    const age = (await value(registry, 'relayer_trades_awaiting_proof_oldest_seconds'))!;
    expect(age).toBeGreaterThanOrEqual(900);
    expect(age).toBeLessThan(960);
    expect(await value(registry, 'relayer_trades', { status: 'DEPOSITED' })).toBe(3);
  });
});
