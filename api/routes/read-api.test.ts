import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  insertAd, insertChain, insertRoute, insertRouteWithChains, insertToken, insertTrade, type RouteFixture,
} from '../../test/support/fixtures.ts';
import { startTestService, type TestService } from '../../test/support/service.ts';

const MAKER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const OTHER_MAKER = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';
const BRIDGER = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
const HUGE = '115792089237316195423570985008687907853269984665640564039457584007913129639935';

let service: TestService;
const getJson = async (path: string) => {
  const res = await service.request(path);
  return { status: res.status, body: await res.json() };
};
const ids = (body: { data: { id: string }[] }) => body.data.map((item) => item.id).sort();

beforeAll(async () => { service = await startTestService(); });
afterAll(async () => { await service.close(); });

describe('GET /v1/chains', () => {
  let evm: { id: string; chainId: string };
  let stellar: { id: string; chainId: string };
  beforeAll(async () => {
    evm = await insertChain(service.knex, { name: 'Filter EVM', chain_id: '424242', rpc_url: 'http://secret-rpc.internal:8545' });
    stellar = await insertChain(service.knex, {
      name: 'Filter Stellar', chain_id: '148', kind: 'STELLAR',
      ad_manager_address: 'CAAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQC526',
      order_portal_address: 'CABAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAFNSZ',
      network_passphrase: 'Standalone Network ; February 2017', rpc_url: 'http://secret-soroban.internal:8000',
      public_rpc_url: 'https://soroban.example.org',
    });
  });

  it('shows a Stellar chain\'s network passphrase and the RPC URL its operator publishes (and still not the service\'s own)', async () => {
    const { body } = await getJson('/v1/chains/148');
    expect(body.networkPassphrase).toBe('Standalone Network ; February 2017');
    expect(body.publicRpcUrl).toBe('https://soroban.example.org');
    expect(JSON.stringify(body)).not.toContain('secret-soroban');
  });

  it('filters by exact name and by chainId', async () => {
    expect(ids((await getJson('/v1/chains?name=Filter%20EVM')).body)).toEqual([evm.id]);
    expect(ids((await getJson('/v1/chains?chainId=148')).body)).toEqual([stellar.id]);
    expect((await getJson('/v1/chains?name=Filter')).body.data).toEqual([]);
  });

  it('shows exactly the spec fields and never the RPC URL', async () => {
    const { status, body } = await getJson('/v1/chains/424242');
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(['adManagerAddress', 'chainId', 'createdAt', 'id', 'kind', 'name', 'orderPortalAddress', 'updatedAt']);
    expect(JSON.stringify(body)).not.toContain('secret-rpc');
    expect(body).toMatchObject({ chainId: '424242', kind: 'EVM', name: 'Filter EVM' });
  });

  it('answers 404 for an unknown chain id and 422 for a non-numeric one', async () => {
    expect((await getJson('/v1/chains/999999999')).status).toBe(404);
    const bad = await getJson('/v1/chains/abc');
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ statusCode: 422, message: ['chainId must be a numeric chain ID string'], error: 'Unprocessable Entity', code: 'VALIDATION_FAILED', retryable: false });
  });
});

describe('GET /v1/routes', () => {
  let a: RouteFixture;
  let reverse: string;
  let xlmRoute: string;
  beforeAll(async () => {
    a = await insertRouteWithChains(service.knex);
    reverse = await insertRoute(service.knex, a.orderTokenId, a.adTokenId);
    const chain = await insertChain(service.knex);
    const xlm = await insertToken(service.knex, chain.id, { symbol: 'XLMX' });
    xlmRoute = await insertRoute(service.knex, a.adTokenId, xlm, { fee: '0.1%' });
  });

  it('filters by adTokenId, orderTokenId, adChainId and orderChainId', async () => {
    expect(ids((await getJson(`/v1/routes?adTokenId=${a.adTokenId}`)).body)).toEqual([a.routeId, xlmRoute].sort());
    expect(ids((await getJson(`/v1/routes?orderTokenId=${a.adTokenId}`)).body)).toEqual([reverse]);
    expect(ids((await getJson(`/v1/routes?adChainId=${a.orderChainId}`)).body)).toEqual([reverse]);
    expect(ids((await getJson(`/v1/routes?orderChainId=${a.orderChainId}&adChainId=${a.adChainId}`)).body)).toEqual([a.routeId]);
  });

  it('matches symbol on either token', async () => {
    expect(ids((await getJson('/v1/routes?symbol=XLMX')).body)).toEqual([xlmRoute]);
  });

  it('nests both tokens with their chain, and metadata', async () => {
    const { status, body } = await getJson(`/v1/routes/${xlmRoute}`);
    expect(status).toBe(200);
    expect(body.metadata).toEqual({ fee: '0.1%' });
    expect(body.adToken).toMatchObject({ id: a.adTokenId, decimals: 18, kind: 'ERC20', chain: { chainId: a.adChainId } });
    expect(Object.keys(body.orderToken.chain).sort()).toEqual(['chainId', 'id', 'name']);
  });

  it('answers 404 for an unknown route and 422 naming id for a non-UUID', async () => {
    expect((await getJson('/v1/routes/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await getJson('/v1/routes/not-a-uuid')).body.message).toEqual(['id must be a UUID']);
  });
});

describe('GET /v1/ads', () => {
  let r1: RouteFixture;
  let r2: RouteFixture;
  const ad: Record<string, string> = {};
  beforeAll(async () => {
    r1 = await insertRouteWithChains(service.knex);
    r2 = await insertRouteWithChains(service.knex);
    ad.active = await insertAd(service.knex, r1, { pool_amount: HUGE, min_amount: '10', max_amount: '100', metadata: { name: 'fast' } });
    ad.paused = await insertAd(service.knex, r1, { base_status: 'PAUSED', creator_address: OTHER_MAKER });
    ad.exhausted = await insertAd(service.knex, r2, { pool_amount: '500', locked_amount: '300', reserved_amount: '200' });
    ad.closed = await insertAd(service.knex, r2, { base_status: 'CLOSED', pool_amount: '0' });
    ad.pending = await insertAd(service.knex, r2, { base_status: 'PENDING' });
  });

  it('lists published ads only, PENDING ones stay hidden', async () => {
    const all = ids((await getJson('/v1/ads?limit=100')).body);
    expect(all).toEqual([ad.active, ad.paused, ad.exhausted, ad.closed].sort());
  });

  it('filters by routeId, creatorAddress (any case), chains and tokens', async () => {
    expect(ids((await getJson(`/v1/ads?routeId=${r1.routeId}`)).body)).toEqual([ad.active, ad.paused].sort());
    expect(ids((await getJson(`/v1/ads?creatorAddress=${OTHER_MAKER.toLowerCase()}`)).body)).toEqual([ad.paused]);
    expect(ids((await getJson(`/v1/ads?adChainId=${r2.adChainId}`)).body)).toEqual([ad.exhausted, ad.closed].sort());
    expect(ids((await getJson(`/v1/ads?orderChainId=${r1.orderChainId}`)).body)).toEqual([ad.active, ad.paused].sort());
    expect(ids((await getJson(`/v1/ads?adTokenId=${r2.adTokenId}&status=CLOSED`)).body)).toEqual([ad.closed]);
    expect(ids((await getJson(`/v1/ads?orderTokenId=${r1.orderTokenId}&creatorAddress=${MAKER}`)).body)).toEqual([ad.active]);
  });

  it('derives EXHAUSTED from a zero available balance, and the status filter agrees', async () => {
    expect(ids((await getJson('/v1/ads?status=EXHAUSTED&limit=100')).body)).toContain(ad.exhausted);
    expect(ids((await getJson('/v1/ads?status=ACTIVE&limit=100')).body)).not.toContain(ad.exhausted);
    expect(ids((await getJson('/v1/ads?status=PAUSED&limit=100')).body)).toEqual([ad.paused]);
    const { body } = await getJson(`/v1/ads/${ad.exhausted}`);
    expect(body).toMatchObject({ status: 'EXHAUSTED', availableAmount: '0', lockedAmount: '500', poolAmount: '500' });
  });

  it('shows one ad with exact amounts beyond 2^53 and nested token summaries', async () => {
    const { status, body } = await getJson(`/v1/ads/${ad.active}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id: ad.active, creatorAddress: MAKER, routeId: r1.routeId, poolAmount: HUGE, availableAmount: HUGE,
      minAmount: '10', maxAmount: '100', status: 'ACTIVE', metadata: { name: 'fast' },
      adToken: { id: r1.adTokenId, chainId: r1.adChainId }, orderToken: { id: r1.orderTokenId, chainId: r1.orderChainId },
    });
    expect(Object.keys(body.adToken).sort()).toEqual(['address', 'chainId', 'decimals', 'id', 'kind', 'name', 'symbol']);
    for (const stamp of [body.createdAt, body.updatedAt]) expect(new Date(stamp).toISOString()).toBe(stamp);
  });

  it('answers 404 for an unknown ad, 422 naming each bad filter', async () => {
    expect((await getJson('/v1/ads/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const bad = await getJson('/v1/ads?routeId=1&status=OPEN&limit=101&adChainId=x&creatorAddress=null');
    expect(bad.status).toBe(422);
    expect(bad.body.message).toEqual(expect.arrayContaining([
      'routeId must be a UUID', 'status must be one of PENDING, ACTIVE, PAUSED, EXHAUSTED, CLOSED',
      'limit must be between 1 and 100', 'adChainId must be a numeric chain ID string',
      'creatorAddress must be a wallet address: 0x and 40 hex digits (EVM, any case) or a Stellar strkey',
    ]));
  });
});

describe('GET /v1/trades/all', () => {
  let r1: RouteFixture;
  let r2: RouteFixture;
  let ad1: string;
  let ad2: string;
  const trade: Record<string, string> = {};
  beforeAll(async () => {
    r1 = await insertRouteWithChains(service.knex);
    r2 = await insertRouteWithChains(service.knex);
    ad1 = await insertAd(service.knex, r1);
    ad2 = await insertAd(service.knex, r2, { creator_address: OTHER_MAKER });
    trade.small = await insertTrade(service.knex, r1, ad1, { amount: '5' });
    trade.huge = await insertTrade(service.knex, r1, ad1, { amount: HUGE, status: 'LOCKED' });
    trade.other = await insertTrade(service.knex, r2, ad2, { amount: '9007199254740993', ad_creator_address: OTHER_MAKER, bridger_address: MAKER });
  });

  it('filters by routeId, adId, maker, bridger and tokens', async () => {
    expect(ids((await getJson(`/v1/trades/all?routeId=${r1.routeId}`)).body)).toEqual([trade.small, trade.huge].sort());
    expect(ids((await getJson(`/v1/trades/all?adId=${ad2}`)).body)).toEqual([trade.other]);
    expect(ids((await getJson(`/v1/trades/all?adCreatorAddress=${OTHER_MAKER}`)).body)).toEqual([trade.other]);
    expect(ids((await getJson(`/v1/trades/all?bridgerAddress=${BRIDGER.toLowerCase()}&routeId=${r1.routeId}`)).body)).toEqual([trade.small, trade.huge].sort());
    expect(ids((await getJson(`/v1/trades/all?adTokenId=${r2.adTokenId}`)).body)).toEqual([trade.other]);
    expect(ids((await getJson(`/v1/trades/all?orderTokenId=${r1.orderTokenId}`)).body)).toEqual([trade.small, trade.huge].sort());
  });

  it('filters amounts inclusively and exactly beyond 2^53', async () => {
    const within = (q: string) => getJson(`/v1/trades/all?${q}&adTokenId=${r1.adTokenId}`).then((r) => ids(r.body));
    expect(await within('minAmount=5')).toEqual([trade.small, trade.huge].sort());
    expect(await within('minAmount=6')).toEqual([trade.huge]);
    expect(await within('maxAmount=5')).toEqual([trade.small]);
    expect(await within(`minAmount=${HUGE}&maxAmount=${HUGE}`)).toEqual([trade.huge]);
    const exact = await getJson(`/v1/trades/all?minAmount=9007199254740993&maxAmount=9007199254740993`);
    expect(ids(exact.body)).toEqual([trade.other]);
  });

  it('shows one trade with its ad and route summaries', async () => {
    const { status, body } = await getJson(`/v1/trades/${trade.huge}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id: trade.huge, routeId: r1.routeId, adId: ad1, adCreatorAddress: MAKER, bridgerAddress: BRIDGER,
      adChainId: r1.adChainId, orderChainId: r1.orderChainId, amount: HUGE, status: 'LOCKED',
      adCreatorClaimed: false, bridgerClaimed: false,
      ad: { id: ad1, routeId: r1.routeId, creatorAddress: MAKER },
      route: { id: r1.routeId, adToken: { id: r1.adTokenId, chain: { chainId: r1.adChainId } }, orderToken: { id: r1.orderTokenId } },
    });
    for (const stamp of [body.createdAt, body.updatedAt]) expect(new Date(stamp).toISOString()).toBe(stamp);
  });

  it('rejects bad amount filters with 422 naming the field, and min above max with 400', async () => {
    for (const value of ['-5', '1.5', '1e3', '0x10', ' 7', '007', `${HUGE}0`]) {
      const res = await getJson(`/v1/trades/all?minAmount=${encodeURIComponent(value)}`);
      expect(res.status, value).toBe(422);
      expect(res.body.message[0], value).toMatch(/^minAmount /);
    }
    const crossed = await getJson('/v1/trades/all?minAmount=10&maxAmount=9');
    expect(crossed).toEqual({ status: 400, body: { statusCode: 400, message: 'minAmount must not exceed maxAmount', error: 'Bad Request', code: 'BAD_REQUEST', retryable: false } });
  });

  it('answers a wallet filter that is not an address with 422 naming it, not an empty page', async () => {
    for (const filter of ['adCreatorAddress', 'bridgerAddress']) {
      for (const value of ['null', '0x1234', `${BRIDGER.toLowerCase()}0`, 'GABC']) {
        const res = await getJson(`/v1/trades/all?${filter}=${value}`);
        expect(res.status, `${filter}=${value}`).toBe(422);
        expect(res.body.message, `${filter}=${value}`).toEqual([expect.stringMatching(new RegExp(`^${filter} must be a wallet address`))]);
      }
    }
  });

  it('answers 404 for an unknown trade', async () => {
    expect((await getJson('/v1/trades/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('filters by one or more statuses, comma-separated or repeated', async () => {
    const inRoute = (q: string) => getJson(`/v1/trades/all?routeId=${r1.routeId}&${q}`).then((r) => ids(r.body));
    expect(await inRoute('status=PENDING')).toEqual([trade.small]);
    expect(await inRoute('status=LOCKED')).toEqual([trade.huge]);
    expect(await inRoute('status=PENDING,LOCKED')).toEqual([trade.small, trade.huge].sort());
    expect(await inRoute('status=PENDING&status=LOCKED')).toEqual([trade.small, trade.huge].sort());
    expect(await inRoute('status=LOCKED,LOCKED&status=SETTLED')).toEqual([trade.huge]);
    expect(await inRoute('status=SETTLED,EXPIRED,DEPOSITED')).toEqual([]);
  });

  it('refuses an unknown status with 422 naming status and the value, listing nothing', async () => {
    for (const query of ['status=PENDING,OPEN', 'status=pending', 'status=', 'status=LOCKED&status=DONE', 'status=PENDING,']) {
      const res = await getJson(`/v1/trades/all?${query}`);
      expect(res.status, query).toBe(422);
      expect(res.body, query).toMatchObject({ statusCode: 422, error: 'Unprocessable Entity', code: 'VALIDATION_FAILED', retryable: false });
      expect(res.body.message, query).toEqual([
        expect.stringMatching(/^status must be one or more of PENDING, DEPOSITED, LOCKED, SETTLED, EXPIRED \(comma-separated or repeated\), received '/),
      ]);
    }
    expect((await getJson('/v1/trades/all?status=PENDING,OPEN')).body.message[0]).toMatch(/received 'OPEN'$/);
  });
});
