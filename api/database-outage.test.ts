import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Wallet } from 'ethers';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/config.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../db/embedded.ts';
import { start, type RunningService } from '../entrypoints/service.ts';
import { eventually } from '../test/support/devnet-client.ts';

/**
 * The API over a PostgreSQL of its own that is stopped and started again under it (issue 24's
 * "restart PostgreSQL"): while it is down every request that needs it answers 503 with
 * Retry-After, never 500, as the OpenAPI document lists (it is served from memory meanwhile); once
 * it is back the same requests answer 200 without restarting the API.
 */

let dir: string;
let port: number;
let database: EmbeddedDatabase;
let service: RunningService;

const startDatabase = () => startEmbeddedDatabase({ dataDir: path.join(dir, 'pg'), port, persistent: true });
const request = (method: string, route: string, body?: unknown) =>
  fetch(`${service.url}${route}`, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });

const REQUESTS: Array<[string, string, unknown?]> = [
  ['GET', '/v1/ads'],
  ['GET', '/v1/trades/all'],
  ['POST', '/v1/auth/challenge', { address: new Wallet(Wallet.createRandom().privateKey).address, chainKind: 'EVM' }],
  ['GET', '/health'],
];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'relayer-db-outage-'));
  // When run as root, PostgreSQL runs as `postgres` and must reach its directory.
  chmodSync(dir, 0o755);
  port = 40000 + Math.floor(Math.random() * 20000);
  database = await startDatabase();
  service = await start(loadConfig({
    NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: database.url, DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000',
  }), pino({ level: 'silent' }));
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await database?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('PostgreSQL restarted under a running API', () => {
  it('answers 503 with Retry-After while it is down, never 500, and 200 again once it is back', async () => {
    for (const [method, route, body] of REQUESTS) expect((await request(method, route, body)).status, route).toBe(200);

    await database.stop();
    for (const [method, route, body] of REQUESTS) {
      const res = await request(method, route, body);
      expect(res.status, `${method} ${route}`).toBe(503);
      if (route !== '/health') {
        expect(res.headers.get('retry-after'), route).toBe('2');
        expect(await res.json()).toEqual({ statusCode: 503, message: expect.stringMatching(/unavailable; retry later$/), error: 'Service Unavailable' });
      }
    }

    // The document says so: each of these operations lists the 503, with Retry-After.
    const document = await (await request('GET', '/openapi.json')).json();
    for (const [method, route] of REQUESTS) {
      const answer = document.paths[route][method.toLowerCase()].responses['503'];
      expect(answer, `${method} ${route}`).toBeDefined();
      expect(Object.keys(answer.headers ?? {}), `${method} ${route}`).toContain('Retry-After');
    }

    database = await startDatabase();
    for (const [method, route, body] of REQUESTS) {
      await eventually(`${method} ${route} after the restart`, async () => (await request(method, route, body)).status, (status) => status === 200, 30_000);
    }
  }, 120_000);
});
