import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAd, insertChain, insertRoute, insertRouteWithChains, insertToken, insertTrade, type RouteFixture } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { call, loginEvm, newEvmAccount } from '../support/wallets.ts';

/**
 * Issue 29, the quote: GET /v1/quotes?routeId=&amount= answers which ads a trade create would
 * reserve against now, best first, with what the Bridger deposits and receives and until when a
 * reservation would hold; or, when no ad would, why. Real service, real PostgreSQL; the fixture
 * chains have no RPC, so create reads no wallet funding (trades/use-cases/own-funding.ts) and needs no devnet.
 */

let service: TestService;
const MAX_OPEN_PER_AD = 2;

beforeAll(async () => {
  service = await startTestService({ MAX_OPEN_RESERVATIONS_PER_AD: String(MAX_OPEN_PER_AD) });
});
afterAll(async () => { await service?.close(); });

const quote = (routeId: string, amount: string) => call(service, 'GET', `/v1/quotes?routeId=${routeId}&amount=${amount}`);

/** A fresh Bridger, signed in: each create its own, so no per-wallet cap is met. */
async function createAs(adId: string, routeId: string, amount: string) {
  const bridger = newEvmAccount();
  const token = (await loginEvm(service, bridger)).body.tokens.access;
  return call(service, 'POST', '/v1/trades/create', { adId, routeId, amount, bridgerDstAddress: bridger.address }, token);
}

const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000);

/** A close request of the ad still waiting for its transaction: the ad takes no trades. */
async function closing(adId: string) {
  await service.knex('ad_requests').insert({
    ad_id: adId, action: 'closeAd', chain_id: '1', contract_address: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    req_hash: `0x${randomUUID().replaceAll('-', '')}`, auth_token: `0x${randomUUID().replaceAll('-', '')}`,
    deadline: new Date(Date.now() + 600_000), status: 'PENDING',
  });
}

/** `n` trades awaiting their deposit against the ad (reservation not run out, or run out when `expired`). */
async function reservations(route: RouteFixture, adId: string, n: number, expired = false) {
  for (let i = 0; i < n; i += 1) {
    await insertTrade(service.knex, route, adId, { status: 'PENDING', reservation_expires_at: new Date(Date.now() + (expired ? -60_000 : 600_000)) });
  }
}

describe('GET /v1/quotes', () => {
  it('lists the ads create would take the amount on, best first (most available, then oldest), and create succeeds on exactly those', async () => {
    const route = await insertRouteWithChains(service.knex);
    const ad = (pool: string, over: Record<string, unknown> = {}, age = 1) => insertAd(service.knex, route, { pool_amount: pool, created_at: minutesAgo(age), ...over });
    const listed = {
      newest: await ad('9999', {}, 1),
      most: await ad('9000', {}, 10),
      olderOf5000: await ad('5000', {}, 30),
      newerOf5000: await ad('5000', {}, 20),
      // Its unfunded reservations ran out: they do not count against MAX_OPEN_RESERVATIONS_PER_AD.
      expiredReservations: await ad('7000', {}, 5),
      withinBounds: await ad('6000', { min_amount: '1000', max_amount: '1000' }, 5),
    };
    await reservations(route, listed.expiredReservations, MAX_OPEN_PER_AD, true);
    const excluded = {
      tooLittle: await ad('999'),
      paused: await ad('9999', { base_status: 'PAUSED' }),
      pending: await ad('9999', { base_status: 'PENDING' }),
      closed: await ad('9999', { base_status: 'CLOSED' }),
      minimumAbove: await ad('9999', { min_amount: '1001' }),
      maximumBelow: await ad('9999', { max_amount: '999' }),
      closing: await ad('9999'),
      reservationsFull: await ad('9999'),
      heldByWithdraw: await ad('1500', { withdrawing_amount: '600' }),
    };
    await closing(excluded.closing);
    await reservations(route, excluded.reservationsFull, MAX_OPEN_PER_AD);
    // Another route's ad never appears.
    await insertAd(service.knex, await insertRouteWithChains(service.knex), { pool_amount: '99999' });

    const before = Date.now();
    const res = await quote(route.routeId, '1000');
    expect(res.status).toBe(200);
    const ids: string[] = res.body.quotes.map((q: { adId: string }) => q.adId);
    // Most available first; the two of 5000 oldest first.
    expect(ids).toEqual([listed.newest, listed.most, listed.expiredReservations, listed.withinBounds, listed.olderOf5000, listed.newerOf5000]);
    expect(res.body).toMatchObject({ routeId: route.routeId, amount: '1000', adAmount: '1000', unavailable: [] });
    const quotedAt = Date.parse(res.body.quotedAt);
    expect(quotedAt).toBeGreaterThanOrEqual(before - 1000);
    const first = res.body.quotes[1];
    expect(first).toEqual({
      adId: listed.most, orderAmount: '1000', adAmount: '1000', minAmount: null, maxAmount: null, availableAmount: '9000',
      reservationExpiresAt: expect.any(String),
    });
    expect(res.body.quotes.find((q: { adId: string }) => q.adId === listed.withinBounds)).toMatchObject({ minAmount: '1000', maxAmount: '1000' });
    // Default TTLs (600 s each) and the 10 s chain margin, from the second of quotedAt, as create computes it.
    expect(Date.parse(first.reservationExpiresAt)).toBe((Math.floor(quotedAt / 1000) + 600 + 10) * 1000);

    // "Listed" means create passes now; every excluded ad is refused by create too.
    for (const adId of ids) {
      const created = await createAs(adId, route.routeId, '1000');
      expect(created.status, `create on quoted ad ${adId}`).toBe(200);
      expect(created.body.reqContractDetails.orderParams).toMatchObject({ orderAmount: '1000', adAmount: '1000' });
    }
    for (const [name, adId] of Object.entries(excluded)) {
      const created = await createAs(adId, route.routeId, '1000');
      expect([404, 409, 422], `create on ${name}`).toContain(created.status);
    }
  });

  it('holds to what create then does: the quoted ad reserves the quoted adAmount until about the quoted reservationExpiresAt', async () => {
    const adChain = await insertChain(service.knex);
    const orderChain = await insertChain(service.knex);
    const adTokenId = await insertToken(service.knex, adChain.id, { symbol: 'USDC', decimals: 7, asset: 'USD' });
    const orderTokenId = await insertToken(service.knex, orderChain.id, { symbol: 'TUSD', decimals: 6, asset: 'USD' });
    const routeId = await insertRoute(service.knex, adTokenId, orderTokenId);
    const adId = await insertAd(service.knex, { routeId, adTokenId, orderTokenId, adChainId: adChain.chainId, orderChainId: orderChain.chainId }, { pool_amount: '1000000000' });

    const quoted = (await quote(routeId, '10000000')).body;
    expect(quoted.quotes).toEqual([expect.objectContaining({ adId, orderAmount: '10000000', adAmount: '100000000', availableAmount: '1000000000' })]);
    const created = await createAs(adId, routeId, '10000000');
    expect(created.status).toBe(200);
    expect(created.body.reqContractDetails.orderParams).toMatchObject({ orderAmount: quoted.quotes[0].orderAmount, adAmount: quoted.quotes[0].adAmount });
    const trade = await service.knex('trades').where({ id: created.body.tradeId }).first('reservation_expires_at');
    const drift = (trade.reservation_expires_at as Date).getTime() - Date.parse(quoted.quotes[0].reservationExpiresAt);
    expect(drift).toBeGreaterThanOrEqual(0);
    expect(drift).toBeLessThanOrEqual(5000);
    expect((await call(service, 'GET', `/v1/ads/${adId}`)).body.availableAmount).toBe('900000000');
  });

  it('explains an amount no ad takes: below every minimum, above every maximum, too little available, closing, reservations full', async () => {
    const route = await insertRouteWithChains(service.knex);
    await insertAd(service.knex, route, { pool_amount: '10000', min_amount: '2000', max_amount: '5000' });
    await insertAd(service.knex, route, { pool_amount: '4000', min_amount: '3000', max_amount: '8000' });

    const below = await quote(route.routeId, '1000');
    expect(below.status).toBe(200);
    expect(below.body).toMatchObject({ quotes: [], adAmount: '1000' });
    expect(below.body.unavailable).toEqual([{ reason: 'BELOW_MINIMUM', adCount: 2, bound: '2000', message: 'amount 1000 is below the minimum of 2 ads (the smallest is 2000)' }]);
    expect((await quote(route.routeId, '9000')).body.unavailable).toEqual([
      { reason: 'ABOVE_MAXIMUM', adCount: 2, bound: '8000', message: 'amount 9000 is above the maximum of 2 ads (the largest is 8000)' },
    ]);
    expect((await quote(route.routeId, '6000')).body.unavailable).toEqual([
      { reason: 'ABOVE_MAXIMUM', adCount: 1, bound: '5000', message: 'amount 6000 is above the maximum of 1 ad (the largest is 5000)' },
      { reason: 'INSUFFICIENT_LIQUIDITY', adCount: 1, bound: '4000', message: expect.stringMatching(/^too little available to cover 6000 T\d+ base units \(1 ad; the most available is 4000\)$/) },
    ]);

    const states = await insertRouteWithChains(service.knex);
    const closingAd = await insertAd(service.knex, states, { pool_amount: '10000' });
    await closing(closingAd);
    const fullAd = await insertAd(service.knex, states, { pool_amount: '10000' });
    await reservations(states, fullAd, MAX_OPEN_PER_AD);
    await insertAd(service.knex, states, { pool_amount: '0' }); // exhausted: open, nothing available
    const none = (await quote(states.routeId, '1000')).body;
    expect(none.quotes).toEqual([]);
    expect(none.unavailable.map((u: { reason: string; adCount: number; bound: string | null }) => [u.reason, u.adCount, u.bound])).toEqual([
      ['AD_CLOSING', 1, null], ['INSUFFICIENT_LIQUIDITY', 1, '0'], ['RESERVATIONS_FULL', 1, null],
    ]);

    const empty = await insertRouteWithChains(service.knex);
    await insertAd(service.knex, empty, { pool_amount: '10000', base_status: 'PAUSED' });
    expect((await quote(empty.routeId, '1000')).body.unavailable).toEqual([
      { reason: 'NO_OPEN_ADS', adCount: 0, bound: null, message: `route ${empty.routeId} has no ACTIVE ad` },
    ]);
  });

  it('explains an amount that does not convert exactly, and a route that cannot be priced, in the words create uses', async () => {
    const adChain = await insertChain(service.knex);
    const orderChain = await insertChain(service.knex);
    const adTokenId = await insertToken(service.knex, adChain.id, { symbol: 'USDC', decimals: 6, asset: 'USD' });
    const orderTokenId = await insertToken(service.knex, orderChain.id, { symbol: 'TUSD', decimals: 7, asset: 'USD' });
    const routeId = await insertRoute(service.knex, adTokenId, orderTokenId);
    const adId = await insertAd(service.knex, { routeId, adTokenId, orderTokenId, adChainId: adChain.chainId, orderChainId: orderChain.chainId }, { pool_amount: '1000000000' });

    const inexact = (await quote(routeId, '10000005')).body;
    expect(inexact).toMatchObject({ quotes: [], adAmount: null });
    const refused = await createAs(adId, routeId, '10000005');
    expect(refused.body).toMatchObject({ statusCode: 422, code: 'AMOUNT_NOT_CONVERTIBLE' });
    expect(inexact.unavailable).toEqual([{ reason: 'INEXACT_CONVERSION', adCount: 0, bound: '10', message: refused.body.message[0] }]);
    // Converts to 0.5 base unit: also inexact, never a quote of 0.
    expect((await quote(routeId, '5')).body.unavailable[0]).toMatchObject({ reason: 'INEXACT_CONVERSION', bound: '10' });
    expect((await quote(routeId, '10000010')).body.quotes).toEqual([expect.objectContaining({ adId, adAmount: '1000001' })]);

    const xlm = await insertToken(service.knex, adChain.id, { symbol: 'XLM', decimals: 7, asset: 'XLM' });
    const eth = await insertToken(service.knex, orderChain.id, { symbol: 'ETH', decimals: 18, asset: 'ETH' });
    const unpriced = await insertRoute(service.knex, xlm, eth);
    const unpricedAd = await insertAd(service.knex, { routeId: unpriced, adTokenId: xlm, orderTokenId: eth, adChainId: adChain.chainId, orderChainId: orderChain.chainId });
    const answer = (await quote(unpriced, '1000')).body;
    const refusedUnpriced = await createAs(unpricedAd, unpriced, '1000');
    expect(refusedUnpriced.body).toMatchObject({ statusCode: 422, code: 'ROUTE_NOT_PRICED' });
    expect(answer).toMatchObject({ quotes: [], adAmount: null, unavailable: [{ reason: 'ROUTE_NOT_PRICED', adCount: 0, bound: null, message: refusedUnpriced.body.message[0] }] });
  });

  it('answers 404 for an unknown route and 422 naming the field for malformed input, changing nothing', async () => {
    const route = await insertRouteWithChains(service.knex);
    const unknown = await quote(randomUUID(), '1000');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ statusCode: 404, error: 'Not Found', message: expect.stringMatching(/^route [0-9a-f-]{36} not found$/) });
    const cases: [string, RegExp][] = [
      [`routeId=${route.routeId}`, /^amount /],
      [`routeId=${route.routeId}&amount=0`, /^amount must be greater than 0/],
      [`routeId=${route.routeId}&amount=1.5`, /^amount must be a non-negative integer/],
      [`routeId=${route.routeId}&amount=-1`, /^amount /],
      [`routeId=${route.routeId}&amount=${'9'.repeat(79)}`, /^amount /],
      ['routeId=nope&amount=1000', /^routeId must be a UUID/],
      ['amount=1000', /^routeId /],
      [`routeId=${route.routeId}&amount=1000&limit=5`, /limit/],
      [`routeId=${route.routeId}&routeId=${route.routeId}&amount=1000`, /^routeId /],
    ];
    for (const [query, message] of cases) {
      const res = await call(service, 'GET', `/v1/quotes?${query}`);
      expect(res.status, query).toBe(422);
      expect(res.body.statusCode, query).toBe(422);
      expect(res.body.message.join('; '), query).toMatch(message);
    }
  });

  it('is public: no token needed', async () => {
    const route = await insertRouteWithChains(service.knex);
    const adId = await insertAd(service.knex, route, { pool_amount: '5000' });
    const res = await service.request(`/v1/quotes?routeId=${route.routeId}&amount=100`);
    expect(res.status).toBe(200);
    expect((await res.json()).quotes.map((q: { adId: string }) => q.adId)).toEqual([adId]);
  });
});
