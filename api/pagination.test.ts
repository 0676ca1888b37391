import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAd, insertRouteWithChains, insertTrade, type RouteFixture } from '../test/support/fixtures.ts';
import { startTestService, type TestService } from '../test/support/service.ts';

describe('keyset pagination', () => {
  let service: TestService;
  let route: RouteFixture;
  beforeAll(async () => {
    service = await startTestService();
    route = await insertRouteWithChains(service.knex);
  });
  afterAll(async () => { await service.close(); });

  async function walk(path: string, limit: number, between?: () => Promise<unknown>) {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const separator = path.includes('?') ? '&' : '?';
      const res = await service.request(`${path}${separator}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { data: { id: string }[]; nextCursor: string | null };
      seen.push(...body.data.map((item) => item.id));
      cursor = body.nextCursor;
      pages += 1;
      if (between) await between();
    } while (cursor);
    return { seen, pages };
  }

  it('defaults to 25 per page and ends with a null cursor', async () => {
    // Same created_at for all rows (one statement): order must still be total, by id.
    await service.knex('ads').insert(Array.from({ length: 30 }, () => ({
      creator_address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', creator_dst_address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      route_id: route.routeId, ad_token_id: route.adTokenId, order_token_id: route.orderTokenId,
      ad_chain_id: route.adChainId, order_chain_id: route.orderChainId, pool_amount: '1', base_status: 'ACTIVE',
    })));
    const first = await (await service.request('/v1/ads')).json();
    expect(first.data).toHaveLength(25);
    expect(typeof first.nextCursor).toBe('string');
    const second = await (await service.request(`/v1/ads?cursor=${encodeURIComponent(first.nextCursor)}`)).json();
    expect(second.data).toHaveLength(5);
    expect(second.nextCursor).toBeNull();
    const all = [...first.data, ...second.data].map((ad: { id: string }) => ad.id);
    expect(new Set(all).size).toBe(30);
  });

  it('never skips or repeats a row when rows are inserted between pages', async () => {
    const adId = await insertAd(service.knex, route);
    const before: string[] = [];
    for (let i = 0; i < 23; i += 1) before.push(await insertTrade(service.knex, route, adId, { amount: String(i + 1) }));
    const inserted: string[] = [];
    const { seen, pages } = await walk(`/v1/trades/all?adId=${adId}`, 4, async () => {
      inserted.push(await insertTrade(service.knex, route, adId));
    });
    expect(pages).toBe(6);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);
    // Newest first: rows inserted after the walk began sort before the cursor and are not served mid-walk.
    for (const id of inserted) expect(seen).not.toContain(id);
  });

  it('refuses a cursor of one list on another with 422 naming cursor', async () => {
    const ad = await insertAd(service.knex, route);
    await insertAd(service.knex, route);
    await insertTrade(service.knex, route, ad);
    await insertTrade(service.knex, route, ad);
    const adsCursor = (await (await service.request('/v1/ads?limit=1')).json()).nextCursor as string;
    const tradesCursor = (await (await service.request('/v1/trades/all?limit=1')).json()).nextCursor as string;
    expect((await service.request(`/v1/ads?limit=1&cursor=${adsCursor}`)).status).toBe(200);
    for (const [path, cursor] of [['/v1/trades/all', adsCursor], ['/v1/ads', tradesCursor], ['/v1/chains', adsCursor], ['/v1/routes', tradesCursor]] as const) {
      const res = await service.request(`${path}?cursor=${cursor}`);
      expect(res.status, path).toBe(422);
      expect((await res.json()).message, path).toEqual([expect.stringMatching(/^cursor pages another list \((ads|trades)\), not /)]);
    }
  });

  it('rejects a cursor it did not issue with 422 naming cursor', async () => {
    for (const cursor of ['garbage', Buffer.from('["x","y"]').toString('base64url'), Buffer.from('{}').toString('base64url'), 'a'.repeat(600)]) {
      const res = await service.request(`/v1/ads?cursor=${cursor}`);
      expect(res.status).toBe(422);
      expect((await res.json()).message[0]).toMatch(/^cursor /);
    }
  });
});
