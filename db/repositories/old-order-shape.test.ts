import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.ts';
import { insertAd, insertRouteWithChains, insertTrade, type RouteFixture } from '../../test/support/fixtures.ts';
import { findTradeLifecycle, lockTrade, openTrades, openTradesPage } from './trade-lifecycle.ts';

/**
 * A rollout runs the route-pricing migration (20261124_4001) while pods of the release before it
 * still create trades: those rows carry `amount` only, written after the migration's backfill.
 * Every read of a trade's order must still give `orderAmount` and `adAmount` (both `amount`, as the
 * migration derives them), or the new code's `BigInt(order.adAmount)` throws on `undefined`.
 */
describe('orders written in the shape before route pricing, after the migration', () => {
  let db: TestDatabase;
  let route: RouteFixture;
  let tradeId: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    route = await insertRouteWithChains(db.knex);
    const adId = await insertAd(db.knex, route);
    // What the previous release's insertTrade wrote: no orderAmount, no adAmount.
    tradeId = await insertTrade(db.knex, route, adId, {
      amount: '1234', status: 'DEPOSITED',
      order_params: JSON.stringify({
        orderChainToken: '0x' + 'e1'.padStart(40, '0'), adChainToken: '0x' + 'e2'.padStart(40, '0'), amount: '1234',
        bridger: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', orderRecipient: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        adId, adCreator: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', adRecipient: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
        salt: '1', orderChainId: route.orderChainId, orderPortal: '0x' + '0a'.padStart(40, '0'), adChainId: route.adChainId,
        adManager: '0x' + '0b'.padStart(40, '0'), lockExpiry: '2000000000', refundTime: '2000003600',
      }),
      order_hash: '0x' + 'ab'.repeat(32), secret: '7', secret_commitment: '8',
      reservation_expires_at: new Date(Date.now() + 3600_000), lock_deadline: new Date(Date.now() + 7200_000),
    });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('every lifecycle read derives orderAmount and adAmount from amount, and BigInt takes them', async () => {
    const reads = [
      await findTradeLifecycle(db.knex, tradeId),
      await db.knex.transaction((trx) => lockTrade(trx, tradeId)),
      (await openTrades(db.knex)).find((trade) => trade.id === tradeId),
      (await openTradesPage(db.knex, { after: null, limit: 10 })).rows.find((trade) => trade.id === tradeId),
    ];
    for (const trade of reads) {
      expect(trade?.orderParams).toMatchObject({ amount: '1234', orderAmount: '1234', adAmount: '1234' });
      expect(BigInt(trade!.orderParams.adAmount)).toBe(1234n);
    }
  });

  it('leaves a stored order that has both amounts as it is (a priced route: adAmount differs)', async () => {
    const stored = (await db.knex('trades').where({ id: tradeId }).first('order_params')).order_params;
    await db.knex('trades').where({ id: tradeId }).update({ order_params: JSON.stringify({ ...stored, orderAmount: '1234', adAmount: '1234000000000' }) });
    const trade = await findTradeLifecycle(db.knex, tradeId);
    expect(trade?.orderParams).toMatchObject({ amount: '1234', orderAmount: '1234', adAmount: '1234000000000' });
  });
});
