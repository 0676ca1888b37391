import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.ts';
import { insertAd, insertRouteWithChains, insertTrade } from '../../test/support/fixtures.ts';
import { oldestOpenTradeAges } from './trade-ages.ts';

let db: TestDatabase;
beforeAll(async () => { db = await createTestDatabase(); });
afterAll(async () => { await db?.drop(); });

describe('oldestOpenTradeAges', () => {
  it('gives 0 for every open status when no trade is in it', async () => {
    expect(await oldestOpenTradeAges(db.knex)).toEqual({ PENDING: 0, DEPOSITED: 0, LOCKED: 0 });
  });

  it('counts a deposited trade from its latest chain event, a pending one from creation, and ignores closed trades', async () => {
    const route = await insertRouteWithChains(db.knex);
    const adId = await insertAd(db.knex, route);
    const ago = (seconds: number) => db.knex.raw(`now() - interval '${seconds} seconds'`);
    await insertTrade(db.knex, route, adId, { created_at: ago(100) });
    const deposited = await insertTrade(db.knex, route, adId, { status: 'DEPOSITED', created_at: ago(3600) });
    await insertTrade(db.knex, route, adId, { status: 'SETTLED', created_at: ago(90_000) });
    await db.knex('chain_events').insert({
      chain_id: route.orderChainId, tx_hash: `0x${'ab'.repeat(32)}`, log_index: 0, block: '1', block_hash: `0x${'cd'.repeat(32)}`,
      event: 'OrderCreated', subject_kind: 'trade', subject_id: deposited, created_at: ago(700),
    });
    const ages = await oldestOpenTradeAges(db.knex);
    expect(ages.PENDING).toBeGreaterThanOrEqual(100);
    expect(ages.PENDING).toBeLessThan(160);
    expect(ages.DEPOSITED).toBeGreaterThanOrEqual(700);
    expect(ages.DEPOSITED).toBeLessThan(760);
    expect(ages.LOCKED).toBe(0);
  });
});
