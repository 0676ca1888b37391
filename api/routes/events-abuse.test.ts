import { connect, type Socket } from 'node:net';
import type { Knex } from 'knex';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import type { PushedEventData } from '../../domain/index.ts';
import { appendPushedEvents } from '../../db/repositories/pushed-events.ts';
import { createProcessLogger } from '../../entrypoints/logger.ts';
import { start, type RunningService } from '../../entrypoints/service.ts';
import { insertAd, insertRouteWithChains, insertTrade, type RouteFixture } from '../../test/support/fixtures.ts';
import { startTestService, type TestService } from '../../test/support/service.ts';
import { openSse, type SseConnection } from '../../test/support/sse-client.ts';
import { call, loginEvm, newEvmAccount } from '../../test/support/wallets.ts';

/**
 * The event streams under abuse, on the real service over real TCP: a client that resets its
 * connection at any point (before, during or after the handler's awaits) gives its stream slot,
 * hub subscription and heartbeat back; a process caps its streams in all; a logout (on any
 * process) ends the session's streams within seconds and nothing committed after it is delivered;
 * a stream ticket refused for any reason is spent, and no log line holds one.
 */

const PER_CLIENT = 3;
let a: TestService;
/** Every line `a` logs (info and up), as its process logger writes them. */
const logLines: string[] = [];
/** A second API process over the same database, capped at 2 streams in all. */
let capped: RunningService;
let knex: Knex;
let route: RouteFixture;
let adId: string;

beforeAll(async () => {
  const env = {
    SSE_HEARTBEAT_SECONDS: '1', SSE_MAX_STREAMS_PER_CLIENT: String(PER_CLIENT), SSE_SESSION_CHECK_SECONDS: '1',
    // No webhook sweep reading user_event_counters while a test holds its lock.
    WEBHOOK_SWEEP_SECONDS: '3600',
  };
  const { logger } = createProcessLogger({ LOG_LEVEL: 'info', LOG_FORMAT: 'json' }, 'api', false, { write: (line: string) => void logLines.push(line) });
  a = await startTestService(env, { logger });
  knex = a.db.knex;
  capped = await start(loadConfig({
    NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: a.db.url, DATA_DIR: a.config.DATA_DIR, LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000', BOOKS_AUDIT_CRON: 'off', STELLAR_DEVNET: 'off', ...env, SSE_MAX_STREAMS: '2',
  }), pino({ level: 'silent' }), { migrate: false });
  route = await insertRouteWithChains(knex);
  adId = await insertAd(knex, route);
});
afterAll(async () => {
  await capped?.stop();
  await a?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A raw HTTP/1.1 client on a node:net socket: sends the request, keeps what comes back, can reset (RST) at any moment. */
interface RawClient {
  socket: Socket;
  received(): string;
  /** Resolves once the connection is up and the request was handed to the kernel. */
  sent: Promise<void>;
  reset(): void;
}

function rawGet(baseUrl: string, path: string, headers: Record<string, string> = {}, localAddress?: string): RawClient {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect({ port: Number(port), host: hostname, ...(localAddress ? { localAddress } : {}) });
  let text = '';
  socket.on('data', (chunk) => { text += chunk.toString('utf8'); });
  socket.on('error', () => undefined); // the reset is ours
  const head = [`GET ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Accept: text/event-stream', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  const sent = new Promise<void>((resolve, reject) => {
    socket.once('connect', () => socket.write(`${head.join('\r\n')}\r\n\r\n`, (error) => (error ? reject(error) : resolve())));
  });
  return { socket, received: () => text, sent, reset: () => socket.resetAndDestroy() };
}

/** Statements of the service waiting on a lock the test holds. */
async function waitingOnLocks(): Promise<number> {
  const { rows } = await knex.raw<{ rows: { n: number }[] }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
  );
  return rows[0]!.n;
}

/** Holds an ACCESS EXCLUSIVE lock on `table` (even plain reads of it wait) while `during` runs. */
async function withTableLocked(table: string, during: () => Promise<void>): Promise<void> {
  const trx = await knex.transaction();
  try {
    await trx.raw(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    await during();
  } finally {
    await trx.rollback();
  }
}

/**
 * The slots all came back: no stream is subscribed in the process (the `relayer_event_streams`
 * gauge), and the client can open its full PER_CLIENT streams again.
 */
async function slotsAllBack(path: string, headers: Record<string, string> = {}): Promise<void> {
  await expect.poll(() => a.container.eventHub.size, { timeout: 5_000 }).toBe(0);
  const again: SseConnection[] = [];
  for (let i = 0; i < PER_CLIENT; i += 1) again.push(await openSse(`${a.url}${path}`, headers));
  expect(again.map((s) => s.status)).toEqual(Array(PER_CLIENT).fill(200));
  for (const s of again) s.abort();
  await expect.poll(() => a.container.eventHub.size, { timeout: 5_000 }).toBe(0);
}

/** Sends `count` requests and resets each: at once, while the handler waits on `lockedTable`, and after the stream opened. */
async function resetAtEveryPoint(path: string, lockedTable: string, headers: Record<string, string> = {}): Promise<void> {
  // 1. Immediately: the request written, then RST at once.
  for (let i = 0; i < 2 * PER_CLIENT; i += 1) {
    const client = rawGet(a.url, path, headers);
    await client.sent;
    client.reset();
  }
  await slotsAllBack(path, headers);

  // 2. During the awaits: the handler is blocked on a read of `lockedTable` when the client resets.
  await withTableLocked(lockedTable, async () => {
    const clients = Array.from({ length: PER_CLIENT }, () => rawGet(a.url, path, headers));
    await Promise.all(clients.map((c) => c.sent));
    await expect.poll(waitingOnLocks, { timeout: 10_000 }).toBeGreaterThanOrEqual(PER_CLIENT);
    for (const client of clients) client.reset();
    await sleep(300); // the server sees the resets while its reads still wait
  });
  await slotsAllBack(path, headers);

  // 3. After the stream opened (its `retry:` line arrived).
  const open = Array.from({ length: PER_CLIENT }, () => rawGet(a.url, path, headers));
  for (const client of open) await expect.poll(() => client.received(), { timeout: 5_000 }).toContain('retry: 2000');
  expect(a.container.eventHub.size).toBe(PER_CLIENT);
  for (const client of open) client.reset();
  await slotsAllBack(path, headers);
}

describe('event stream slots', () => {
  it('GET /v1/trades/:id/events: a client resetting its connection before, during or after the awaits gets every slot back; so does an error answer', async () => {
    const tradeId = await insertTrade(knex, route, adId);
    await resetAtEveryPoint(`/v1/trades/${tradeId}/events`, 'trades');
    // Answers that end the request (404, 204) hold no slot either.
    for (let i = 0; i < 2 * PER_CLIENT; i += 1) expect((await openSse(`${a.url}/v1/trades/00000000-0000-4000-8000-000000000000/events`)).status).toBe(404);
    await slotsAllBack(`/v1/trades/${tradeId}/events`);
  });

  it('GET /v1/events: a client resetting its connection during sign-in, during the read of its feed, or after the stream opened gets every slot back', async () => {
    const token = (await loginEvm(a, newEvmAccount())).body.tokens.access;
    const auth = { authorization: `Bearer ${token}` };
    await resetAtEveryPoint('/v1/events', 'user_event_counters', auth);
    // During the session check of requireAuth: a session this process has not read yet (one it has is
    // answered from its session cache, without a read to hold).
    const unread = { authorization: `Bearer ${(await loginEvm(a, newEvmAccount())).body.tokens.access}` };
    await withTableLocked('sessions', async () => {
      const clients = Array.from({ length: PER_CLIENT }, () => rawGet(a.url, '/v1/events', unread));
      await Promise.all(clients.map((c) => c.sent));
      await expect.poll(waitingOnLocks, { timeout: 10_000 }).toBeGreaterThanOrEqual(PER_CLIENT);
      for (const client of clients) client.reset();
      await sleep(300);
    });
    await slotsAllBack('/v1/events', auth);
  });

  it('caps the streams of a process (SSE_MAX_STREAMS): one more is 503 with Retry-After, whatever the client; a slot frees when a stream ends', async () => {
    const tradeId = await insertTrade(knex, route, adId);
    const path = `${capped.url}/v1/trades/${tradeId}/events`;
    const open = [await openSse(path), await openSse(path)];
    expect(open.map((s) => s.status)).toEqual([200, 200]);
    const refused = await fetch(path, { headers: { accept: 'text/event-stream' } });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toEqual({
      statusCode: 503, error: 'Service Unavailable', message: 'this API process serves its maximum of 2 event streams; retry later', code: 'SERVICE_UNAVAILABLE', retryable: true,
    });
    open[0]!.abort();
    await expect.poll(async () => {
      const again = await openSse(path);
      again.abort();
      return again.status;
    }, { timeout: 5_000 }).toBe(200);
    open[1]!.abort();
  });

  it('the per-client 429 carries Retry-After', async () => {
    const tradeId = await insertTrade(knex, route, adId);
    const path = `${a.url}/v1/trades/${tradeId}/events`;
    const open: SseConnection[] = [];
    for (let i = 0; i < PER_CLIENT; i += 1) open.push(await openSse(path));
    const refused = await fetch(path, { headers: { accept: 'text/event-stream' } });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    for (const s of open) s.abort();
    await expect.poll(() => a.container.eventHub.size, { timeout: 5_000 }).toBe(0);
  });
});

describe('a stream ticket refused before it is redeemed', () => {
  /** Another client's address on this host: loopback is all of 127/8. */
  const ELSEWHERE = '127.0.0.2';
  /** The status another address gets for GET `path` (its connection dropped after). */
  const statusFromElsewhere = async (baseUrl: string, path: string) => {
    const client = rawGet(baseUrl, path, {}, ELSEWHERE);
    await client.sent;
    await expect.poll(() => client.received(), { timeout: 10_000, message: 'waited for the status line' }).toMatch(/^HTTP\/1\.1 \d{3}/);
    client.reset();
    return Number(client.received().slice(9, 12));
  };

  it('a ticket refused with 422 (Last-Event-ID), 429 (STREAM_LIMIT) or 503 is spent: its URL opens nothing afterwards, from another address either', async () => {
    const token = (await loginEvm(a, newEvmAccount())).body.tokens.access;
    const newTicket = async () => (await call(a, 'POST', '/v1/events/ticket', undefined, token)).body.ticket as string;
    const url = (ticket: string) => `/v1/events?ticket=${ticket}`;
    const refusedTickets: string[] = [];

    // 422: a Last-Event-ID that is not an event id, read before the ticket.
    const badResume = await newTicket();
    const resumed = await openSse(`${a.url}${url(badResume)}`, { 'last-event-id': 'not-a-number' });
    expect(resumed.status).toBe(422);
    refusedTickets.push(badResume);

    // 429: this client already holds its PER_CLIENT streams.
    const held: SseConnection[] = [];
    for (let i = 0; i < PER_CLIENT; i += 1) held.push(await openSse(`${a.url}/v1/events`, { authorization: `Bearer ${token}` }));
    expect(held.map((s) => s.status)).toEqual(Array(PER_CLIENT).fill(200));
    const overCap = await newTicket();
    const limited = await openSse(`${a.url}${url(overCap)}`);
    expect([limited.status, limited.body.code]).toEqual([429, 'STREAM_LIMIT']);
    refusedTickets.push(overCap);
    for (const s of held) s.abort();

    // 503: the other process serves its maximum of streams.
    const tradeId = await insertTrade(knex, route, adId);
    const full = [await openSse(`${capped.url}/v1/trades/${tradeId}/events`), await openSse(`${capped.url}/v1/trades/${tradeId}/events`)];
    const busy = await newTicket();
    expect((await openSse(`${capped.url}${url(busy)}`)).status).toBe(503);
    refusedTickets.push(busy);
    for (const s of full) s.abort();

    // The same URLs from another address, which holds no stream: each ticket is spent.
    for (const ticket of refusedTickets) expect(await statusFromElsewhere(a.url, url(ticket))).toBe(401);
    // A ticket not refused still opens a stream from there (the other address is served at all).
    expect(await statusFromElsewhere(a.url, url(await newTicket()))).toBe(200);
  });

  it('logs a request\'s URL with its ticket value redacted', async () => {
    const token = (await loginEvm(a, newEvmAccount())).body.tokens.access;
    const tickets = [(await call(a, 'POST', '/v1/events/ticket', undefined, token)).body.ticket as string, 'A'.repeat(43)];
    // Refused (422) and unknown (401), with the name spelled as Express also reads it.
    expect((await openSse(`${a.url}/v1/events?lastEventId=x&ticket=${tickets[0]}`)).status).toBe(422);
    expect((await openSse(`${a.url}/v1/events?%74icket=${tickets[1]}`)).status).toBe(401);
    await expect.poll(() => logLines.filter((line) => line.includes('/v1/events?')).length, { timeout: 10_000, message: 'waited for both request lines' })
      .toBeGreaterThanOrEqual(2);
    const logged = logLines.join('');
    for (const ticket of tickets) expect(logged).not.toContain(ticket);
    expect(logged).toContain('/v1/events?lastEventId=x&ticket=[REDACTED]');
    expect(logged).toContain('/v1/events?%74icket=[REDACTED]');
  });
});

describe('a stream and the session that opened it', () => {
  const deposited = (tradeId: string): PushedEventData => ({
    type: 'trade.status_changed',
    data: { tradeId, adId, status: 'DEPOSITED', previousStatus: 'PENDING', proofReady: false, bridgerClaimed: false, adCreatorClaimed: false, unlockDue: null },
  });
  const publish = (address: string, tradeId: string) =>
    knex.transaction((trx) => appendPushedEvents(trx, { tradeId, adId, recipients: [address], events: [deposited(tradeId)] }));

  /** Resolves with how long `stream` took to end, or rejects after `ms`. */
  const endsWithin = async (stream: SseConnection, ms: number) => {
    const began = Date.now();
    await Promise.race([stream.ended, sleep(ms).then(() => { throw new Error(`the stream was still open ${ms} ms after logout`); })]);
    return Date.now() - began;
  };

  it('a logout ends the session\'s open /v1/events streams on every API process within seconds; nothing committed after it is delivered', async () => {
    const user = newEvmAccount();
    const token = (await loginEvm(a, user)).body.tokens.access;
    const other = (await loginEvm(a, user)).body.tokens.access; // a second session of the same user, not logged out
    const auth = (t: string) => ({ authorization: `Bearer ${t}` });
    const here = await openSse(`${a.url}/v1/events`, auth(token));
    const there = await openSse(`${capped.url}/v1/events`, auth(token)); // the other process
    const survivor = await openSse(`${a.url}/v1/events`, auth(other));
    expect([here.status, there.status, survivor.status]).toEqual([200, 200, 200]);
    await publish(user.address, (await insertTrade(knex, route, adId)));
    await Promise.all([here.waitFor(1), there.waitFor(1), survivor.waitFor(1)]);

    const logout = await fetch(`${a.url}/v1/auth/logout`, { method: 'POST', headers: auth(token) });
    expect(logout.status).toBe(204);
    await publish(user.address, (await insertTrade(knex, route, adId))); // committed after the logout
    const took = await Promise.all([endsWithin(here, 5_000), endsWithin(there, 5_000)]);
    expect(Math.max(...took)).toBeLessThan(5_000);
    expect(here.messages.map((m) => m.id)).toEqual([1]);
    expect(there.messages.map((m) => m.id)).toEqual([1]);
    // The user's other session keeps its stream and gets the event.
    await survivor.waitFor(2);
    survivor.abort();
    expect((await openSse(`${a.url}/v1/events`, auth(token))).status).toBe(401);
  });

  it('an idle stream ends too when its session is revoked by another path (a refresh token presented twice)', async () => {
    const user = newEvmAccount();
    const { access, refresh } = (await loginEvm(a, user)).body.tokens;
    const idle = await openSse(`${a.url}/v1/events`, { authorization: `Bearer ${access}` });
    expect(idle.status).toBe(200);
    const refreshOnce = () => fetch(`${a.url}/v1/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh }) });
    expect((await refreshOnce()).status).toBe(200);
    expect((await refreshOnce()).status).toBe(401); // reuse: the whole session is revoked
    await endsWithin(idle, 5_000);
  });
});
