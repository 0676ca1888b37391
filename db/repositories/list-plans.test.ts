import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRouteWithChains } from '../../test/support/fixtures.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.ts';
import { seedAdsAndTrades } from '../../tools/seed-ads.ts';
import { listAds, listAdVersions, type AdFilter } from './ads.ts';
import { listTrades, listTradeVersions, type TradeFilter } from './trades.ts';
import { listChains } from './chains.ts';
import { adRefusals, quotableAds, type QuoteQuery } from './ad-quotes.ts';

/**
 * Every list query the API issues is answered from an index: run each filter through the real
 * repository over 10,000 seeded ads, capture the SQL it sends, and EXPLAIN it.
 */
describe('list query plans', () => {
  let db: TestDatabase;
  let sample: { route_id: string; creator_address: string; ad_token_id: string; order_token_id: string; ad_chain_id: string; order_chain_id: string; id: string };
  beforeAll(async () => {
    db = await createTestDatabase();
    for (let i = 0; i < 4; i += 1) await insertRouteWithChains(db.knex);
    await seedAdsAndTrades(db.knex, 10_000);
    sample = await db.knex('ads').first();
  });
  afterAll(async () => { await db.drop(); });

  async function planOf(run: () => Promise<unknown>): Promise<string> {
    const captured: { sql: string; bindings: unknown[] }[] = [];
    const listener = (query: { sql: string; bindings: unknown[] }) => captured.push(query);
    db.knex.on('query', listener);
    try {
      await run();
    } finally {
      db.knex.off('query', listener);
    }
    const { sql, bindings } = captured[0]!;
    // The event carries pg-style $n placeholders, numbered in binding order; knex.raw wants ?.
    const result = await db.knex.raw(`EXPLAIN ${sql.replace(/\$\d+/g, "?")}`, bindings as never[]);
    return result.rows.map((row: { 'QUERY PLAN': string }) => row['QUERY PLAN']).join('\n');
  }

  const adFilters: AdFilter[] = [
    {},
    { routeId: 'route' }, { creatorAddress: 'creator' }, { adChainId: 'adChain' }, { orderChainId: 'orderChain' },
    { adTokenId: 'adToken' }, { orderTokenId: 'orderToken' }, { status: 'PAUSED' }, { status: 'EXHAUSTED' },
  ];

  it('serves every ads filter, and the next page, from an index', async () => {
    const real = (filter: AdFilter): AdFilter => ({
      ...filter,
      ...(filter.routeId && { routeId: sample.route_id }),
      ...(filter.creatorAddress && { creatorAddress: sample.creator_address }),
      ...(filter.adChainId && { adChainId: sample.ad_chain_id }),
      ...(filter.orderChainId && { orderChainId: sample.order_chain_id }),
      ...(filter.adTokenId && { adTokenId: sample.ad_token_id }),
      ...(filter.orderTokenId && { orderTokenId: sample.order_token_id }),
    });
    for (const filter of adFilters) {
      const first = await listAds(db.knex, real(filter), 25);
      const plan = await planOf(() => listAds(db.knex, real(filter), 25, first.nextCursor ?? undefined));
      expect(plan, JSON.stringify(filter)).toMatch(/Index (Only )?Scan/);
      expect(plan, JSON.stringify(filter)).not.toMatch(/Seq Scan/);
    }
  });

  it('serves every trades filter from an index', async () => {
    const trade = await db.knex('trades').first();
    const filters: TradeFilter[] = [
      {}, { routeId: trade.route_id }, { adId: trade.ad_id }, { adCreatorAddress: trade.ad_creator_address },
      { bridgerAddress: trade.bridger_address }, { adTokenId: trade.ad_token_id }, { orderTokenId: trade.order_token_id },
      { minAmount: '9000000' }, { maxAmount: '5000' }, { minAmount: '1000', maxAmount: '2000' },
      { orderHash: trade.order_hash ?? `0x${'ab'.repeat(32)}` }, { txHash: 'cd'.repeat(32) },
      { status: ['PENDING'] }, { status: ['LOCKED', 'SETTLED'] }, { status: ['EXPIRED'], routeId: trade.route_id },
    ];
    for (const filter of filters) {
      const plan = await planOf(() => listTrades(db.knex, filter, 25));
      expect(plan, JSON.stringify(filter)).toMatch(/Index (Only )?Scan/);
      expect(plan, JSON.stringify(filter)).not.toMatch(/Seq Scan/);
    }
  });

  it('reads the pages\' row versions from the same indexes', async () => {
    const runs: (() => Promise<unknown>)[] = [
      () => listAdVersions(db.knex, {}, 25),
      () => listAdVersions(db.knex, { routeId: sample.route_id, status: 'ACTIVE' }, 25),
      () => listTradeVersions(db.knex, {}, 25),
      () => listTradeVersions(db.knex, { minAmount: '9000000' }, 25),
    ];
    for (const run of runs) {
      const plan = await planOf(run);
      expect(plan).toMatch(/Index (Only )?Scan/);
      expect(plan).not.toMatch(/Seq Scan/);
    }
  });

  it('answers a quote from the quote index: in its order, no sort, stopping at the limit; each reservation count from its own index', async () => {
    // Every ad has its confirmed create request, as in a real database (an empty table is read whole).
    await db.knex.raw(`INSERT INTO ad_requests (ad_id, action, amount, chain_id, contract_address, req_hash, auth_token, deadline, status, tx_hash)
      SELECT id, 'createAd', pool_amount, ad_chain_id, '0x' || lpad('0b', 40, '0'), '0x' || md5('req ' || id), '0x' || md5('auth ' || id), now(), 'CONFIRMED', '0x' || md5('tx ' || id)
      FROM ads`);
    await db.knex.raw('ANALYZE ad_requests');
    const amount = 10n ** 15n;
    const query: QuoteQuery = { routeId: sample.route_id, orderAmount: amount, adAmount: amount, closeCutoff: new Date(), now: new Date(), maxOpenPerAd: 20 };
    expect(await quotableAds(db.knex, query, 20)).toHaveLength(20);
    const plan = await planOf(() => quotableAds(db.knex, query, 20));
    expect(plan).toMatch(/Index Scan using ads_quote_idx on ads/);
    expect(plan).toMatch(/trades_unfunded_ad_idx/);
    expect(plan).not.toMatch(/Seq Scan|Sort/);
    // The explanation of an empty quote reads the route's ads by their route index.
    const refusals = await planOf(() => adRefusals(db.knex, { ...query, orderAmount: 1n, adAmount: 1n }));
    expect(refusals).toMatch(/Index (Only )?Scan/);
    expect(refusals).not.toMatch(/Seq Scan/);
  });

  it('pages chains in order without sorting the table', async () => {
    const plan = await planOf(() => listChains(db.knex, {}, 25));
    expect(plan).toMatch(/Limit/);
  });
});
