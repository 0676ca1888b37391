import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retryingFetch } from './execute.js';

/**
 * The retrying fetch of ./execute against a real HTTP server on port 0 that answers each request
 * by a script: what is retried (a dropped connection, 429, 503), under which Idempotency-Key, after
 * how long, and what is handed back as it is.
 */

type Answer = (request: IncomingMessage, response: ServerResponse) => void;
let script: Answer[] = [];
const seen: Array<{ method: string; key: string | undefined; body: string }> = [];
const server = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => { body += chunk; });
  request.on('end', () => {
    seen.push({ method: request.method!, key: request.headers['idempotency-key'] as string | undefined, body });
    const next = script.shift() ?? ((_, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    next(request, response);
  });
});
let base: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));

const error = (status: number, body: object, headers: Record<string, string> = {}): Answer => (_, response) =>
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
const dropped: Answer = (request) => request.socket.destroy();
const start = (answers: Answer[]) => { script = answers; seen.length = 0; };

describe('retryingFetch', () => {
  it('sends a POST again after a dropped connection, a 503 and a 429, under one Idempotency-Key and the same body, waiting what Retry-After says', async () => {
    start([dropped, error(503, { code: 'UNAVAILABLE', retryable: true }, { 'retry-after': '1' }), error(429, { code: 'RATE_LIMITED', retryable: true }, { 'retry-after': '0' })]);
    const waits: number[] = [];
    const send = retryingFetch({ baseDelayMs: 10, onRetry: ({ delayMs }) => waits.push(delayMs) });
    const response = await send(new Request(`${base}/v1/trades/create`, { method: 'POST', body: '{"amount":"100"}', headers: { 'content-type': 'application/json' } }));
    expect(response.status).toBe(200);
    expect(seen).toHaveLength(4);
    expect(new Set(seen.map((request) => request.key)).size).toBe(1);
    expect(seen[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.map((request) => request.body)).toEqual(Array(4).fill('{"amount":"100"}'));
    expect(waits).toEqual([10, 1000, 0]);
  });

  it('keeps the caller\'s own Idempotency-Key', async () => {
    start([error(503, { retryable: true })]);
    await retryingFetch({ baseDelayMs: 1 })(new Request(`${base}/v1/trades/create`, { method: 'POST', body: '{}', headers: { 'idempotency-key': 'mine-1' } }));
    expect(seen.map((request) => request.key)).toEqual(['mine-1', 'mine-1']);
  });

  it('hands back a 429 whose body says retryable: false, and any other refusal, at once', async () => {
    start([error(429, { code: 'IDEMPOTENCY_KEYS_EXHAUSTED', retryable: false }, { 'retry-after': '3600' }), error(422, { code: 'VALIDATION', retryable: false })]);
    const send = retryingFetch({ baseDelayMs: 1 });
    expect((await send(new Request(`${base}/v1/trades/create`, { method: 'POST', body: '{}' }))).status).toBe(429);
    expect((await send(new Request(`${base}/v1/trades/create`, { method: 'POST', body: '{}' }))).status).toBe(422);
    expect(seen).toHaveLength(2);
  });

  it('gives up after its retries with the last answer, and adds no key to sign-in or a GET', async () => {
    start([error(503, {}), error(503, {}), error(503, {})]);
    const last = await retryingFetch({ retries: 2, baseDelayMs: 1 })(new Request(`${base}/v1/auth/login`, { method: 'POST', body: '{}' }));
    expect(last.status).toBe(503);
    expect(seen.map((request) => request.key)).toEqual([undefined, undefined, undefined]);
    start([]);
    await retryingFetch()(new Request(`${base}/v1/trades/all`));
    expect(seen).toEqual([{ method: 'GET', key: undefined, body: '' }]);
  });
});
