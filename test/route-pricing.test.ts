import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routePricingProblem } from '../domain/route-pricing.ts';
import { insertAd, insertChain, insertRoute, insertToken } from './support/fixtures.ts';
import { startTestService, type TestService } from './support/service.ts';
import { call, loginEvm, newEvmAccount } from './support/wallets.ts';

/**
 * Issue 20, item 3 (the part that is done): an order carries one amount that both contracts move
 * 1:1 in base units, so on a route between 6- and 7-decimal tokens a 10-dollar deposit unlocked 100
 * dollars of the Maker's. Until orders carry an amount per chain, such a route takes no trades.
 */

let service: TestService;
const bridger = newEvmAccount();
let bridgerToken: string;

/** An ACTIVE ad of 1,000 on a fresh route between tokens of `adDecimals` and `orderDecimals`. */
async function adOnRoute(adDecimals: number, orderDecimals: number) {
  const adChain = await insertChain(service.knex);
  const orderChain = await insertChain(service.knex);
  const adTokenId = await insertToken(service.knex, adChain.id, { symbol: 'USDC', decimals: adDecimals });
  const orderTokenId = await insertToken(service.knex, orderChain.id, { symbol: 'TUSD', decimals: orderDecimals });
  const routeId = await insertRoute(service.knex, adTokenId, orderTokenId);
  const adId = await insertAd(service.knex, { routeId, adTokenId, orderTokenId, adChainId: adChain.chainId, orderChainId: orderChain.chainId });
  return { adId, routeId };
}

beforeAll(async () => {
  service = await startTestService();
  bridgerToken = (await loginEvm(service, bridger)).body.tokens.access;
});
afterAll(async () => { await service?.close(); });

describe('routes the service cannot price', () => {
  it('prices only routes whose tokens have the same decimals (1:1 in base units)', () => {
    expect(routePricingProblem({ symbol: 'TUSD', decimals: 6 }, { symbol: 'TUSD', decimals: 6 })).toBeNull();
    expect(routePricingProblem({ symbol: 'USDC', decimals: 7 }, { symbol: 'TUSD', decimals: 6 })).toMatch(/^cannot be priced yet: its tokens have different decimals \(USDC 7, TUSD 6\)/);
    expect(routePricingProblem({ symbol: 'ETH', decimals: 18 }, { symbol: 'XLM', decimals: 7 })).not.toBeNull();
  });

  it('refuses a trade on a 7 -> 6 decimals route with 422 naming routeId, and reserves nothing', async () => {
    const { adId, routeId } = await adOnRoute(7, 6);
    const res = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '10000000', bridgerDstAddress: bridger.address }, bridgerToken);
    expect(res.status).toBe(422);
    expect(res.body.message).toEqual([expect.stringMatching(/^routeId cannot be priced yet: its tokens have different decimals \(USDC 7, TUSD 6\)/)]);
    expect((await call(service, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ availableAmount: '1000' });
    expect(Number((await service.knex('trades').where({ ad_id: adId }).count({ n: '*' }).first())!.n)).toBe(0);
  });

  it('still trades on a route between tokens of equal decimals', async () => {
    const { adId, routeId } = await adOnRoute(6, 6);
    const res = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
    expect(res.status).toBe(200);
    expect((await call(service, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ availableAmount: '900' });
  });
});
