import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAds } from '../../db/repositories/ads.ts';
import { listTrades } from '../../db/repositories/trades.ts';
import { insertAd, insertRouteWithChains, insertTrade, type RouteFixture } from '../../test/support/fixtures.ts';
import { startTestService, type TestService } from '../../test/support/service.ts';
import { call, loginEvm, newEvmAccount, type EvmAccount } from '../../test/support/wallets.ts';
import { PUBLIC_MAX_AGE_SECONDS } from '../http-cache.ts';
import { presentAd, presentTrade } from '../presenters.ts';

let service: TestService;
let route: RouteFixture;
let maker: EvmAccount;
let makerToken: string;
let adId: string;
let tradeId: string;

beforeAll(async () => {
  service = await startTestService();
  route = await insertRouteWithChains(service.knex);
  maker = newEvmAccount();
  makerToken = (await loginEvm(service, maker)).body.tokens.access;
  adId = await insertAd(service.knex, route, {
    creator_address: maker.address, creator_dst_address: maker.address, metadata: JSON.stringify({ name: 'cached', tags: ['a "quoted" tag'] }),
  });
  await insertAd(service.knex, route, { max_amount: '115792089237316195423570985008687907853269984665640564039457584007913129639935', min_amount: '7' });
  tradeId = await insertTrade(service.knex, route, adId, { amount: '5' });
});
afterAll(async () => { await service.close(); });

// fetch adds `Cache-Control: no-cache` to a request carrying If-None-Match unless one is given; a
// browser revalidating sends max-age=0, which still allows a 304.
const get = (path: string, headers: Record<string, string> = {}) => service.request(path, { headers: { 'cache-control': 'max-age=0', ...headers } });

describe('public reads are cacheable and revalidate with a weak ETag', () => {
  for (const path of ['/v1/ads', '/v1/ads/{adId}', '/v1/trades/all', '/v1/trades/{tradeId}']) {
    it(`${path}: Cache-Control and a weak ETag; a matching If-None-Match gets 304 with no body`, async () => {
      const url = path.replace('{adId}', adId).replace('{tradeId}', tradeId);
      const first = await get(url);
      expect(first.status).toBe(200);
      expect(first.headers.get('cache-control')).toBe(`public, max-age=${PUBLIC_MAX_AGE_SECONDS}`);
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^W\/"[\w-]+"$/);
      await first.arrayBuffer();

      const again = await get(url, { 'if-none-match': etag });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
      expect(again.headers.get('etag')).toBe(etag);

      const other = await get(url, { 'if-none-match': 'W/"something-else"' });
      expect(other.status).toBe(200);
      expect((await other.json())).toBeTruthy();
    });
  }

  it('a GET by the writer right after its write sees it, with or without the old ETag', async () => {
    const before = await get(`/v1/ads/${adId}`);
    const etag = before.headers.get('etag')!;
    const listBefore = await get('/v1/ads');
    const listEtag = listBefore.headers.get('etag')!;
    expect((await before.json()).status).toBe('ACTIVE');
    await listBefore.arrayBuffer();

    const update = await call(service, 'PATCH', `/v1/ads/${adId}/update`, { status: 'PAUSED', metadata: { name: 'written' } }, makerToken);
    expect(update.status).toBe(200);

    // Revalidating with the pre-write ETag must not get a 304: the row's version changed.
    for (const [url, old] of [[`/v1/ads/${adId}`, etag], ['/v1/ads', listEtag]] as const) {
      const after = await get(url, { 'if-none-match': old, authorization: `Bearer ${makerToken}` });
      expect(after.status).toBe(200);
      expect(after.headers.get('etag')).not.toBe(old);
      const body = await after.json();
      const ad = 'data' in body ? body.data.find((item: { id: string }) => item.id === adId) : body;
      expect(ad).toMatchObject({ status: 'PAUSED', metadata: { name: 'written' } });
    }
    // And a plain GET (no validators) sees it too: the service keeps no response cache.
    expect(await (await get(`/v1/ads/${adId}`)).json()).toMatchObject({ status: 'PAUSED' });
  });

  it('the caller-specific list (status=PENDING) is private and never stored', async () => {
    await insertAd(service.knex, route, { creator_address: maker.address, creator_dst_address: maker.address, base_status: 'PENDING' });
    const res = await get('/v1/ads?status=PENDING', { authorization: `Bearer ${makerToken}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.headers.get('etag')).toBeNull();
    expect((await res.json()).data).toHaveLength(1);
  });
});

describe('texts of row versions already presented (PresentedRows)', () => {
  it('a list equals presentAd of the same rows, field for field (amounts as strings, nulls, metadata, timestamps)', async () => {
    const records = await listAds(service.knex, {}, 100);
    const tokens = await service.container.registryCache.tokensById(records.items.flatMap((ad) => [ad.adTokenId, ad.orderTokenId]));
    expect(records.items.length).toBeGreaterThanOrEqual(2);
    for (let round = 0; round < 2; round += 1) {
      // The first round presents the rows, the second splices the texts it kept.
      const page = await (await get('/v1/ads?limit=100')).json();
      expect(page).toEqual({ data: records.items.map((ad) => presentAd(ad, tokens)), nextCursor: null });
    }
  });

  it('trades equal presentTrade of the same rows (amount as a string, booleans, the nested ad, the route)', async () => {
    await insertTrade(service.knex, route, adId, { amount: '115792089237316195423570985008687907853269984665640564039457584007913129639935', bridger_claimed: true });
    const records = await listTrades(service.knex, {}, 100);
    const routes = await service.container.registryCache.routesById(records.items.map((trade) => trade.routeId));
    expect(records.items.length).toBeGreaterThanOrEqual(2);
    for (let round = 0; round < 2; round += 1) {
      const page = await (await get('/v1/trades/all?limit=100')).json();
      expect(page).toEqual({ data: records.items.map((trade) => presentTrade(trade, routes)), nextCursor: null });
    }
  });

  it('never answers a row as it was before a write made by anyone else (another replica, the trade workflow)', async () => {
    const tradeUrl = `/v1/trades/${tradeId}`;
    // Every read path has presented the ad and the trade at least once.
    for (const url of ['/v1/ads?limit=100', `/v1/ads/${adId}`, '/v1/trades/all?limit=100', tradeUrl]) await (await get(url)).arrayBuffer();

    // Written straight to PostgreSQL, as a process other than this API would.
    await service.knex('ads').where({ id: adId }).update({ pool_amount: '987654321', updated_at: service.knex.fn.now() });
    await service.knex('trades').where({ id: tradeId }).update({ status: 'LOCKED', updated_at: service.knex.fn.now() });

    const list = await (await get('/v1/ads?limit=100')).json();
    expect(list.data.find((ad: { id: string }) => ad.id === adId).poolAmount).toBe('987654321');
    expect((await (await get(`/v1/ads/${adId}`)).json()).poolAmount).toBe('987654321');
    const trades = await (await get('/v1/trades/all?limit=100')).json();
    expect(trades.data.find((trade: { id: string }) => trade.id === tradeId).status).toBe('LOCKED');
    expect((await (await get(tradeUrl)).json()).status).toBe('LOCKED');

    // Even a second write in the same millisecond as the first: the version also names the transaction.
    await service.knex.transaction(async (trx) => {
      await trx('ads').where({ id: adId }).update({ pool_amount: '987654322' });
    });
    expect((await (await get(`/v1/ads/${adId}`)).json()).poolAmount).toBe('987654322');
  });

  it('a list page answered again from its kept bytes is the presented page byte for byte, until a row on it changes', async () => {
    await service.knex('ads').where({ id: adId }).update({ metadata: JSON.stringify({ name: 'café ✓', n: 1 }), updated_at: service.knex.fn.now() });
    const answers = [];
    // First: presented afresh; then spliced from the kept texts or sent from the kept body.
    for (let round = 0; round < 3; round += 1) {
      const res = await get('/v1/ads?limit=100');
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
      answers.push({ etag: res.headers.get('etag'), bytes });
    }
    for (const answer of answers.slice(1)) {
      expect(answer.etag).toBe(answers[0]!.etag);
      expect(answer.bytes.equals(answers[0]!.bytes)).toBe(true);
    }
    const records = await listAds(service.knex, {}, 100);
    const tokens = await service.container.registryCache.tokensById(records.items.flatMap((ad) => [ad.adTokenId, ad.orderTokenId]));
    expect(JSON.parse(answers[0]!.bytes.toString('utf8'))).toEqual({ data: records.items.map((ad) => presentAd(ad, tokens)), nextCursor: null });

    // Written straight to PostgreSQL: the kept body is of another version now.
    await service.knex('ads').where({ id: adId }).update({ metadata: JSON.stringify({ name: 'café ✓', n: 2 }), updated_at: service.knex.fn.now() });
    const after = await get('/v1/ads?limit=100', { 'if-none-match': answers[0]!.etag! });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).not.toBe(answers[0]!.etag);
    expect((await after.json()).data.find((ad: { id: string }) => ad.id === adId).metadata).toEqual({ name: 'café ✓', n: 2 });
  });
});
