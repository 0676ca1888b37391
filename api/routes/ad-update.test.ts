import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAd, insertRouteWithChains, type RouteFixture } from '../../test/support/fixtures.ts';
import { startTestService, type TestService } from '../../test/support/service.ts';
import { call, loginEvm, newEvmAccount } from '../../test/support/wallets.ts';

/** PATCH /v1/ads/:id/update as the Maker sees it: what was stored, and clearing what may be cleared. */
describe('updating an ad', () => {
  let service: TestService;
  let route: RouteFixture;
  const maker = newEvmAccount();
  let token: string;
  beforeAll(async () => {
    service = await startTestService();
    route = await insertRouteWithChains(service.knex);
    token = (await loginEvm(service, maker)).body.tokens.access;
  });
  afterAll(async () => { await service?.close(); });

  it('says it stored PAUSED on an exhausted ad, which stays PAUSED once funded again', async () => {
    const adId = await insertAd(service.knex, route, { creator_address: maker.address, pool_amount: '100', locked_amount: '100' });
    expect((await call(service, 'GET', `/v1/ads/${adId}`)).body.status).toBe('EXHAUSTED');
    const res = await call(service, 'PATCH', `/v1/ads/${adId}/update`, { status: 'PAUSED' }, token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: adId, status: 'EXHAUSTED', setStatus: 'PAUSED' });
    // The lock returns to the pool: the ad shows what was set.
    await service.knex('ads').where({ id: adId }).update({ locked_amount: '0' });
    expect((await call(service, 'GET', `/v1/ads/${adId}`, undefined, undefined)).body.status).toBe('PAUSED');
    const resumed = await call(service, 'PATCH', `/v1/ads/${adId}/update`, { status: 'ACTIVE' }, token);
    expect(resumed.body).toMatchObject({ status: 'ACTIVE', setStatus: 'ACTIVE' });
  });

  it('clears metadata with null, and a create may send null for none', async () => {
    const adId = await insertAd(service.knex, route, { creator_address: maker.address, metadata: JSON.stringify({ name: 'fast lane' }) });
    const cleared = await call(service, 'PATCH', `/v1/ads/${adId}/update`, { metadata: null }, token);
    expect(cleared.status).toBe(200);
    expect(cleared.body.metadata).toBeNull();
    expect((await call(service, 'GET', `/v1/ads/${adId}`)).body.metadata).toBeNull();
    expect((await service.knex('ads').where({ id: adId }).first('metadata')).metadata).toBeNull();
    const set = await call(service, 'PATCH', `/v1/ads/${adId}/update`, { metadata: { name: 'slow lane' } }, token);
    expect(set.body.metadata).toEqual({ name: 'slow lane' });
  });

  it('names what an empty update lacks once, without repeating the word body', async () => {
    const adId = await insertAd(service.knex, route, { creator_address: maker.address });
    const res = await call(service, 'PATCH', `/v1/ads/${adId}/update`, {}, token);
    expect(res.status).toBe(422);
    expect(res.body.message).toEqual(['body must name at least one of status, minAmount, maxAmount, metadata']);
  });
});
