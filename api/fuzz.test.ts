import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../test/support/service.ts';

/** Deterministic pseudo-random generator, so a failure replays. */
function rng(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const NASTY = [
  '', ' ', '0', '-1', '1e309', '9'.repeat(400), '1.0', '0x10', 'NaN', 'null', 'undefined', 'true', '[]', '{}',
  "' OR 1=1 --", '"; DROP TABLE ads; --', '%00', '\u0000', '😀'.repeat(50), 'ℵ', '\u202e', 'a'.repeat(5000),
  '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '../../etc/passwd', '%', '%zz', '%E0%A4%A',
  '<script>', '\\', '{"$gt":""}', 'ACTIVE', 'PENDING', '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
];

const ENDPOINTS = ['/v1/chains', '/v1/routes', '/v1/ads', '/v1/trades/all'];
const ITEM_ENDPOINTS = ['/v1/chains/', '/v1/routes/', '/v1/ads/', '/v1/trades/'];
const PARAMS = ['name', 'chainId', 'adTokenId', 'orderTokenId', 'adChainId', 'orderChainId', 'symbol', 'routeId', 'creatorAddress',
  'status', 'adId', 'adCreatorAddress', 'bridgerAddress', 'minAmount', 'maxAmount', 'cursor', 'limit', 'x', 'limit[]', 'a[b]', '__proto__'];

describe('malformed requests', () => {
  let service: TestService;
  beforeAll(async () => { service = await startTestService(); });
  afterAll(async () => { await service.close(); });

  it('never produce a 5xx on any read endpoint (400 random requests)', async () => {
    const random = rng(20261122);
    const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]!;
    const value = () => (random() < 0.7 ? pick(NASTY) : randomBytes(Math.floor(random() * 40)).toString(pick(['hex', 'base64', 'latin1'] as const)));
    const failures: string[] = [];
    const requests: string[] = [];
    for (let i = 0; i < 400; i += 1) {
      if (random() < 0.3) {
        requests.push(pick(ITEM_ENDPOINTS) + encodeURIComponent(value()));
        continue;
      }
      const query = Array.from({ length: 1 + Math.floor(random() * 4) }, () => {
        const key = pick(PARAMS);
        // Sometimes send raw (unencoded) bytes, sometimes repeat a key to make an array.
        const raw = random() < 0.2 ? value() : encodeURIComponent(value());
        return random() < 0.15 ? `${key}=${raw}&${key}=${raw}` : `${key}=${raw}`;
      }).join('&');
      requests.push(`${pick(ENDPOINTS)}?${query}`);
    }
    for (let i = 0; i < requests.length; i += 20) {
      await Promise.all(requests.slice(i, i + 20).map(async (path) => {
        let status: number;
        try {
          const res = await service.request(path);
          status = res.status;
          const body = await res.json();
          if (status >= 400 && (body.statusCode !== status || typeof body.error !== 'string')) failures.push(`${path}: body ${JSON.stringify(body)}`);
        } catch (error) {
          // fetch itself refuses some raw bytes in URLs; that request never reached the server.
          if (error instanceof TypeError) return;
          throw error;
        }
        if (status >= 500) failures.push(`${path}: ${status}`);
      }));
    }
    expect(failures).toEqual([]);
  });

  it('never produce a 5xx for odd bodies and content types on a POST endpoint', async () => {
    const bodies = ['[]', '"x"', '1', 'null', '{"a":' + '['.repeat(5000), '\u0000', '{"__proto__":{"x":1}}', 'x'.repeat(2000)];
    for (const body of bodies) {
      for (const type of ['application/json', 'text/plain', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded']) {
        const res = await service.request('/v1/trades/create', { method: 'POST', headers: { 'content-type': type }, body });
        expect(res.status, `${type} ${body.slice(0, 20)}`).toBeLessThan(500);
      }
    }
  });
});
