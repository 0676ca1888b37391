import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { insertAd, insertRouteWithChains } from '../test/support/fixtures.ts';

describe('migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it('roll all the way down and back up', async () => {
    await db.knex.migrate.rollback(undefined, true);
    expect(await db.knex.schema.hasTable('chains')).toBe(false);
    expect(await db.knex.schema.hasTable('ads')).toBe(false);
    await db.knex.migrate.latest();
    for (const table of ['chains', 'tokens', 'routes', 'ads', 'trades']) {
      expect(await db.knex.schema.hasTable(table)).toBe(true);
    }
  });

  it('keep amounts as exact decimal strings beyond 2^53', async () => {
    const [chain] = await db.knex('chains').insert({ name: 'a', chain_id: '1', kind: 'EVM', ad_manager_address: '0x', order_portal_address: '0x' }).returning('id');
    const row = await db.knex.raw(`SELECT '115792089237316195423570985008687907853269984665640564039457584007913129639935'::numeric(78,0) AS v`);
    expect(row.rows[0].v).toBe('115792089237316195423570985008687907853269984665640564039457584007913129639935');
    expect(chain.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('give every stored order both amounts (it moved `amount` on both chains), every token its symbol as asset, and refuse half a rate', async () => {
    const route = await insertRouteWithChains(db.knex);
    const adId = await insertAd(db.knex, route);
    // Down to just before the route pricing migration, whatever later migrations were added since.
    const applied = async () => ((await db.knex.migrate.list())[0] as { name: string }[]).map((m) => m.name);
    while ((await applied()).includes('20261124_4001_route_pricing')) await db.knex.migrate.down();
    await db.knex('trades').insert({
      route_id: route.routeId, ad_id: adId, ad_creator_address: '0x1', bridger_address: '0x2', bridger_dst_address: '0x2',
      ad_chain_id: route.adChainId, order_chain_id: route.orderChainId, ad_token_id: route.adTokenId, order_token_id: route.orderTokenId,
      amount: '5000', order_params: JSON.stringify({ amount: '5000', salt: '1' }),
    });
    await db.knex('tokens').insert({ chain_id: (await db.knex('chains').first('id')).id, symbol: 'usdx', name: 'x', address: '0xab', decimals: 6, kind: 'ERC20' });
    await db.knex.migrate.latest();
    const trade = await db.knex('trades').where({ ad_id: adId }).first();
    expect(trade.order_params).toEqual({ amount: '5000', orderAmount: '5000', adAmount: '5000', salt: '1' });
    expect((await db.knex('tokens').where({ address: '0xab' }).first()).asset).toBe('USDX');
    await expect(db.knex('routes').where({ id: route.routeId }).update({ rate_order_units: '10' })).rejects.toThrow(/routes_rate_check/);
    await expect(db.knex('routes').where({ id: route.routeId }).update({ rate_order_units: '0', rate_ad_units: '1' })).rejects.toThrow(/routes_rate_check/);
    await db.knex('routes').where({ id: route.routeId }).update({ rate_order_units: '10', rate_ad_units: '1' });
  });
});


describe('a migration behind a long transaction', () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  it('gives up after lock_timeout (5 s) instead of queueing every query on the table behind it, and runs once the lock is free', async () => {
    const applied = async () => ((await db.knex.migrate.list())[0] as { name: string }[]).map((m) => m.name);
    // The audit cursors migration creates an index on trades: it needs a SHARE lock, which any open write holds off.
    while ((await applied()).includes('20261126_3301_audit_cursors')) await db.knex.migrate.down();
    const route = await insertRouteWithChains(db.knex);
    const adId = await insertAd(db.knex, route);
    const writer = await db.knex.transaction();
    try {
      await writer('ads').where({ id: adId }).update({ pool_amount: '2000' });
      await writer.raw(`LOCK TABLE trades IN ROW EXCLUSIVE MODE`);
      const started = Date.now();
      await expect(db.knex.migrate.latest()).rejects.toThrow(/lock timeout/);
      const waited = Date.now() - started;
      expect(waited).toBeGreaterThanOrEqual(4_500);
      expect(waited).toBeLessThan(30_000);
      expect(await db.knex.schema.hasTable('audit_cursors')).toBe(false);
    } finally {
      await writer.rollback();
    }
    await db.knex.migrate.latest();
    expect(await db.knex.schema.hasTable('audit_cursors')).toBe(true);
  }, 60_000);
});
