import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry, type Histogram } from 'prom-client';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { insertAd, insertRouteWithChains, insertTrade, type RouteFixture } from '../test/support/fixtures.ts';
import type { AppliedEvent } from './orchestrator.ts';
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
