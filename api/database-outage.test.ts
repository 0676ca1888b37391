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
    RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000', METRICS_PORT: '0', METRICS_SAMPLE_SECONDS: '1',
  }), pino({ level: 'silent' }));
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await database?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** One scrape of the metrics port: its status, its text, and how long it took. */
async function scrape(): Promise<{ status: number; text: string; ms: number }> {
  const began = performance.now();
  const res = await fetch(`${service.metricsUrl!}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  return { status: res.status, text, ms: performance.now() - began };
}
/** The value of the unlabelled sample `name` in Prometheus text, if present. */
const sample = (text: string, name: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
};

describe('/metrics while PostgreSQL is down', () => {
  it('answers 200 at once with every metric, the trade gauges as last read and how old they are; the document lists no 503', async () => {
    // The API on the embedded runner leads the trade gauges' sampler: they are read within a round.
    await eventually('the first trade gauges', scrape, ({ text }) => /^relayer_trades_stuck\{status="PENDING"\} 0$/m.test(text) && sample(text, 'relayer_db_up') === 1, 30_000);
    await request('GET', '/v1/ads');

    await database.stop();
    await eventually('relayer_db_up 0', scrape, ({ text }) => sample(text, 'relayer_db_up') === 0, 30_000);
    const scrapes = [];
    for (let i = 0; i < 5; i++) scrapes.push(await scrape());
    const last = scrapes.at(-1)!;
    for (const { status } of scrapes) expect(status).toBe(200);
    // No scrape waits on the database (each used to wait for a pool connection until it failed).
    const slowest = Math.max(...scrapes.map((s) => s.ms));
    console.log(`/metrics with PostgreSQL down: ${scrapes.map((s) => s.ms.toFixed(1)).join(', ')} ms`);
    expect(slowest).toBeLessThan(500);
    // The process's own and the prover's metrics, the HTTP ones, and the trade gauges as last read.
    for (const name of ['process_cpu_seconds_total', 'relayer_prover_queue_depth', 'http_request_duration_seconds_count', 'relayer_trades_stuck', 'relayer_trade_start_outbox_pending']) {
      expect(last.text, name).toMatch(new RegExp(`^${name}(\\{| )`, 'm'));
    }
    // Their age grows while nothing can be read.
    const age = sample(last.text, 'relayer_trade_gauges_age_seconds')!;
    expect(age).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(sample((await scrape()).text, 'relayer_trade_gauges_age_seconds')!).toBeGreaterThan(age + 1);

    const document = await (await request('GET', '/openapi.json')).json();
    expect(Object.keys(document.paths['/metrics'].get.responses)).not.toContain('503');

    // Liveness (/live on the metrics port, deploy/k8s) answers without the database: a failover
    // must not get every API pod restarted. Readiness (/health) says 503 meanwhile.
    for (let i = 0; i < 3; i++) {
      const began = performance.now();
      const live = await fetch(`${service.metricsUrl!}/live`, { signal: AbortSignal.timeout(2_000) });
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: 'ok' });
      expect(performance.now() - began).toBeLessThan(500);
    }
    expect((await request('GET', '/health')).status).toBe(503);

    database = await startDatabase();
    await eventually('fresh trade gauges after the restart', scrape, ({ text }) => sample(text, 'relayer_db_up') === 1 && sample(text, 'relayer_trade_gauges_age_seconds')! < 3, 60_000);
  }, 180_000);
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
        expect(await res.json()).toEqual({ statusCode: 503, message: expect.stringMatching(/unavailable; retry later$/), error: 'Service Unavailable', code: 'DATABASE_UNAVAILABLE', retryable: true });
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
