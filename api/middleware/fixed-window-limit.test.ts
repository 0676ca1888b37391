import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { fixedWindowLimit } from './fixed-window-limit.ts';

let clock = 1_000_000;
const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/**
 * A server behind the limiter; the client address comes from X-Forwarded-For (one trusted hop),
 * so one test can speak as several clients, IPv6 ones included.
 */
async function serve(limit: number, windowMs = 60_000): Promise<(ip: string) => Promise<Response>> {
  const app = express();
  app.set('trust proxy', 1);
  app.use(fixedWindowLimit({ windowMs, limit, name: 'general', now: () => clock }));
  app.get('/', (_req, res) => { res.json({ ok: true }); });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return (ip) => fetch(url, { headers: { 'x-forwarded-for': ip } });
}

describe('the general request budget (fixed window, in process)', () => {
  it('counts per client, answers 429 in the spec body with Retry-After, and starts afresh with the next window', async () => {
    clock = 1_000_000;
    const get = await serve(2, 60_000);
    const first = await get('203.0.113.7');
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-policy')).toBe('"general"; q=2; w=60');
    expect(first.headers.get('ratelimit')).toBe('"general"; r=1; t=60');
    expect((await get('203.0.113.7')).status).toBe(200);

    clock += 15_000;
    const refused = await get('203.0.113.7');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('45');
    expect(refused.headers.get('ratelimit')).toBe('"general"; r=0; t=45');
    expect(await refused.json()).toEqual({ statusCode: 429, message: 'too many general requests; retry later with exponential backoff', error: 'Too Many Requests', code: 'RATE_LIMITED', retryable: true });
    // Another client has its own budget.
    expect((await get('198.51.100.1')).status).toBe(200);

    clock += 45_000;
    expect((await get('203.0.113.7')).status).toBe(200);
  });

  it('counts an IPv6 client by its /56, and an IPv4-mapped address as the IPv4 one', async () => {
    clock = 5_000_000;
    const get = await serve(1);
    expect((await get('2001:db8:abcd:1200::1')).status).toBe(200);
    // Same /56 (2001:db8:abcd:12xx), another address: the same client.
    expect((await get('2001:db8:abcd:12ff::9')).status).toBe(429);
    expect((await get('2001:db8:abcd:1300::1')).status).toBe(200);
    expect((await get('192.0.2.5')).status).toBe(200);
    expect((await get('::ffff:192.0.2.5')).status).toBe(429);
  });
});
