import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import { start, type RunningService } from '../../entrypoints/service.ts';
import { createTestDatabase } from '../../test/support/db.ts';
import { insertAd, insertRouteWithChains, insertTrade } from '../../test/support/fixtures.ts';
import { openSse } from '../../test/support/sse-client.ts';

/** Two API replicas over one fresh database, as behind a load balancer. */
async function twoReplicas(env: Record<string, string>) {
  const db = await createTestDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'relayer-replicas-'));
  const config = loadConfig({
    NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: db.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env,
  });
  const replicas = [await start(config, pino({ level: 'silent' }), { migrate: false }), await start(config, pino({ level: 'silent' }), { migrate: false })];
  cleanups.push(async () => {
    for (const replica of replicas) await replica.stop();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { db, replicas };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const challenge = (replica: RunningService) =>
  fetch(`${replica.url}/v1/auth/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });

describe('the sign-in budget', () => {
  it('is one budget across API replicas over one database', async () => {
    const { replicas: [a, b] } = await twoReplicas({ AUTH_RATE_LIMIT_MAX: '4', RATE_LIMIT_MAX: '1000' });
    const statuses: number[] = [];
    for (const replica of [a!, b!, a!, b!]) statuses.push((await challenge(replica)).status);
    // Each replica has seen only two requests, yet the client has spent the budget on both.
    const refusedOnA = await challenge(a!);
    const refusedOnB = await challenge(b!);
    expect(statuses).toEqual([422, 422, 422, 422]);
    expect([refusedOnA.status, refusedOnB.status]).toEqual([429, 429]);
    expect(refusedOnB.headers.get('ratelimit-policy')).toContain('q=4');
    expect(refusedOnB.headers.get('ratelimit')).toContain('r=0');
    expect(await refusedOnB.json()).toEqual({ statusCode: 429, message: 'too many auth requests; retry later with exponential backoff', error: 'Too Many Requests', code: 'RATE_LIMITED', retryable: true });
  });

  it('keeps its counters in PostgreSQL, where the scheduled purge removes them once their window ends', async () => {
    const { db, replicas: [a] } = await twoReplicas({ AUTH_RATE_LIMIT_MAX: '10' });
    await challenge(a!);
    await challenge(a!);
    const rows = await db.knex('rate_limits').select('key', 'points', 'expire');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ key: expect.stringMatching(/^auth/), points: 2 });
    expect((await a!.container.authPurger.runOnce()).rateLimitCounters).toBe(0);
    await db.knex('rate_limits').update({ expire: Date.now() - 1 });
    expect((await a!.container.authPurger.runOnce()).rateLimitCounters).toBe(1);
    expect(await db.knex('rate_limits').select('key')).toEqual([]);
  });
});

describe('the general budget', () => {
  it('is counted per replica (a gateway enforces the global one)', async () => {
    const { replicas: [a, b] } = await twoReplicas({ RATE_LIMIT_MAX: '3' });
    const onA: number[] = [];
    for (let i = 0; i < 4; i += 1) onA.push((await fetch(`${a!.url}/v1/chains`)).status);
    expect(onA).toEqual([200, 200, 200, 429]);
    expect((await fetch(`${b!.url}/v1/chains`)).status).toBe(200);
  });

  it('counts opening an event stream like any request: a client past it gets 429, not another stream', async () => {
    const { db, replicas: [a] } = await twoReplicas({ RATE_LIMIT_MAX: '2' });
    const route = await insertRouteWithChains(db.knex);
    const tradeId = await insertTrade(db.knex, route, await insertAd(db.knex, route));
    const open = [await openSse(`${a!.url}/v1/trades/${tradeId}/events`), await openSse(`${a!.url}/v1/trades/${tradeId}/events`)];
    const refused = await openSse(`${a!.url}/v1/trades/${tradeId}/events`);
    for (const stream of open) stream.abort();
    expect(open.map((s) => s.status)).toEqual([200, 200]);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests', code: 'RATE_LIMITED' });
  });
});
