import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adAmountOf, orderAmountStep, routePricing } from '../../domain/route-pricing.ts';
import { insertAd, insertChain, insertRoute, insertToken } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { call, loginEvm, newEvmAccount } from '../support/wallets.ts';

/**
 * Issue 20, item 3: an order carried one amount that both contracts moved 1:1 in base units, so on
 * a route between 6- and 7-decimal tokens of one asset a 10-dollar deposit unlocked 100 dollars of
 * the Maker's. Now the route prices the deposit in the ad token's units (docs/trades.md "Amounts
 * across chains"); the order carries both, and the ad's liquidity is reserved in the ad's units.
 */

let service: TestService;
const bridger = newEvmAccount();
let bridgerToken: string;

/** An ACTIVE ad with a pool of `pool` on a fresh route between two tokens (ad side first). */
async function adOnRoute(ad: { decimals: number; asset: string }, order: { decimals: number; asset: string }, pool = '1000000000', rate?: [string, string]) {
  const adChain = await insertChain(service.knex);
  const orderChain = await insertChain(service.knex);
  const adTokenId = await insertToken(service.knex, adChain.id, { symbol: 'USDC', ...ad });
  const orderTokenId = await insertToken(service.knex, orderChain.id, { symbol: 'TUSD', ...order });
  const routeId = await insertRoute(service.knex, adTokenId, orderTokenId);
  if (rate) await service.knex('routes').where({ id: routeId }).update({ rate_order_units: rate[0], rate_ad_units: rate[1] });
  const adId = await insertAd(service.knex, { routeId, adTokenId, orderTokenId, adChainId: adChain.chainId, orderChainId: orderChain.chainId }, { pool_amount: pool });
  return { adId, routeId };
}

const createTrade = (adId: string, routeId: string, amount: string) =>
  call(service, 'POST', '/v1/trades/create', { adId, routeId, amount, bridgerDstAddress: bridger.address }, bridgerToken);
const availableOf = async (adId: string) => (await call(service, 'GET', `/v1/ads/${adId}`)).body.availableAmount;
const tradesOf = async (adId: string) => Number((await service.knex('trades').where({ ad_id: adId }).count({ n: '*' }).first())!.n);

beforeAll(async () => {
  service = await startTestService();
  bridgerToken = (await loginEvm(service, bridger)).body.tokens.access;
});
afterAll(async () => { await service?.close(); });

describe('a route\'s price', () => {
  const usd = (decimals: number) => ({ symbol: `USD${decimals}`, decimals, asset: 'USD' });

  it('scales between tokens of one asset by their decimals, both ways, and refuses what does not convert exactly', () => {
    const up = routePricing(usd(7), usd(6), null);
    expect(up).toEqual({ ok: true, price: { adUnits: 10n, orderUnits: 1n } });
    if (!up.ok) throw new Error('priced');
    expect(adAmountOf(10_000_000n, up.price)).toBe(100_000_000n);
    const down = routePricing(usd(6), usd(18), null);
    if (!down.ok) throw new Error('priced');
    expect(adAmountOf(10n ** 18n, down.price)).toBe(10n ** 6n);
    expect(adAmountOf(10n ** 18n + 1n, down.price)).toBeNull();
    expect(adAmountOf(10n ** 11n, down.price)).toBeNull(); // converts to 0.1 base unit
    expect(orderAmountStep(down.price)).toBe(10n ** 12n);
  });

  it('uses a stated rate, and refuses tokens of different or unknown assets without one', () => {
    const eth = { symbol: 'ETH', decimals: 18, asset: 'ETH' };
    const xlm = { symbol: 'XLM', decimals: 7, asset: 'XLM' };
    expect(routePricing(xlm, eth, null)).toEqual({ ok: false, problem: 'cannot be priced: its tokens are different assets (XLM XLM, ETH ETH) and it states no rate' });
    expect(routePricing(xlm, { ...eth, asset: null }, null)).toMatchObject({ ok: false, problem: expect.stringContaining('ETH unknown') });
    const priced = routePricing(xlm, eth, { orderUnits: '10000000', adUnits: '1' });
    if (!priced.ok) throw new Error('priced');
    expect(adAmountOf(10n ** 18n, priced.price)).toBe(10n ** 11n);
    expect(orderAmountStep(priced.price)).toBe(10_000_000n);
  });
});

describe('trades on a route between tokens of different decimals', () => {
  it('orders 10 TUSD (6 decimals) against 10 USDC (7 decimals): both amounts in the order, the ad reserves 10 USDC', async () => {
    const { adId, routeId } = await adOnRoute({ decimals: 7, asset: 'USD' }, { decimals: 6, asset: 'USD' });
    const res = await createTrade(adId, routeId, '10000000');
    expect(res.status).toBe(200);
    expect(res.body.reqContractDetails.orderParams).toMatchObject({ amount: '10000000', orderAmount: '10000000', adAmount: '100000000' });
    expect(await availableOf(adId)).toBe(String(1_000_000_000 - 100_000_000));
    const trade = (await call(service, 'GET', `/v1/trades/${res.body.tradeId}`, undefined, bridgerToken)).body;
    expect(trade.amount).toBe('10000000');
    const params = await call(service, 'GET', `/v1/trades/${res.body.tradeId}/params`, undefined, bridgerToken);
    expect(params.body).toMatchObject({ amount: '10000000', orderAmount: '10000000', adAmount: '100000000' });
  });

  it('answers 422 naming amount for a deposit that does not convert exactly (7 -> 6 decimals), reserving nothing', async () => {
    const { adId, routeId } = await adOnRoute({ decimals: 6, asset: 'USD' }, { decimals: 7, asset: 'USD' });
    const res = await createTrade(adId, routeId, '10000005');
    expect(res.status).toBe(422);
    expect(res.body.message).toEqual([expect.stringMatching(/^amount 10000005 TUSD base units do not convert exactly into USDC base units on this route \(10 : 1\): use a multiple of 10$/)]);
    expect(await availableOf(adId)).toBe('1000000000');
    expect(await tradesOf(adId)).toBe(0);
    expect((await createTrade(adId, routeId, '10000000')).status).toBe(200);
    expect(await availableOf(adId)).toBe(String(1_000_000_000 - 1_000_000));
  });

  it('checks the ad\'s liquidity in the ad token\'s units: a deposit worth more than the pool is refused', async () => {
    const { adId, routeId } = await adOnRoute({ decimals: 7, asset: 'USD' }, { decimals: 6, asset: 'USD' }, '99999999');
    const res = await createTrade(adId, routeId, '10000000'); // 10 TUSD = 100000000 USDC base units > 99999999
    expect(res.status).toBe(409);
    expect(await availableOf(adId)).toBe('99999999');
  });

  it('refuses with 422 naming routeId a route between different assets that states no rate, and trades on one that does', async () => {
    const unpriced = await adOnRoute({ decimals: 7, asset: 'XLM' }, { decimals: 18, asset: 'ETH' });
    const res = await createTrade(unpriced.adId, unpriced.routeId, '10000000');
    expect(res.status).toBe(422);
    expect(res.body.message).toEqual(['routeId cannot be priced: its tokens are different assets (USDC XLM, TUSD ETH) and it states no rate']);
    expect(await tradesOf(unpriced.adId)).toBe(0);

    const priced = await adOnRoute({ decimals: 7, asset: 'XLM' }, { decimals: 18, asset: 'ETH' }, '1000000000', ['10000000', '1']);
    const ok = await createTrade(priced.adId, priced.routeId, '30000000');
    expect(ok.status).toBe(200);
    expect(ok.body.reqContractDetails.orderParams).toMatchObject({ orderAmount: '30000000', adAmount: '3' });
  });
});

describe('a route as a dApp reads it', () => {
  it('shows its price, so a client knows adAmount and the amount step before it creates a trade', async () => {
    const decimals = await adOnRoute({ decimals: 6, asset: 'USD' }, { decimals: 7, asset: 'USD' });
    expect((await call(service, 'GET', `/v1/routes/${decimals.routeId}`)).body.price).toEqual({ orderUnits: '10', adUnits: '1', amountStep: '10' });
    const rated = await adOnRoute({ decimals: 7, asset: 'XLM' }, { decimals: 18, asset: 'ETH' }, '1000000000', ['10000000', '4']);
    expect((await call(service, 'GET', `/v1/routes/${rated.routeId}`)).body.price).toEqual({ orderUnits: '10000000', adUnits: '4', amountStep: '2500000' });
    const unpriced = await adOnRoute({ decimals: 7, asset: 'XLM' }, { decimals: 18, asset: 'ETH' });
    const listed = (await call(service, 'GET', '/v1/routes?limit=100')).body.data.find((route: { id: string }) => route.id === unpriced.routeId);
    expect(listed.price).toBeNull();
  });
});
