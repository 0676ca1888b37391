import type { Knex } from 'knex';
import jwt from 'jsonwebtoken';
import { issueAccessToken } from '../../auth/tokens.ts';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import type { PushedEventData } from '../../domain/index.ts';
import { appendPushedEvents } from '../../db/repositories/pushed-events.ts';
import { start, type RunningService } from '../../entrypoints/service.ts';
import { insertAd, insertRouteWithChains, insertTrade, type RouteFixture } from '../../test/support/fixtures.ts';
import { pushedEventListeners, terminateBackends } from '../../test/support/pushed-listeners.ts';
import { startTestService, type TestService } from '../../test/support/service.ts';
import { openSse } from '../../test/support/sse-client.ts';
import { loginEvm, newEvmAccount } from '../../test/support/wallets.ts';

/**
 * The event streams' contract on two API replicas over one database: events committed anywhere
 * reach a stream on either, in order, resumable; the refusals (404, 422, 401, 429) and 204.
 */

let a: TestService;
let b: RunningService;
let knex: Knex;
let route: RouteFixture;
let adId: string;

beforeAll(async () => {
  const env = { SSE_HEARTBEAT_SECONDS: '1', SSE_MAX_STREAMS_PER_CLIENT: '3' };
  a = await startTestService(env);
  knex = a.db.knex;
  b = await start(loadConfig({
    NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: a.db.url, DATA_DIR: a.config.DATA_DIR, LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000', ...env,
  }), pino({ level: 'silent' }), { migrate: false });
  route = await insertRouteWithChains(knex);
  adId = await insertAd(knex, route);
});
afterAll(async () => {
  await b?.stop();
  await a?.close();
});

const step = (tradeId: string, status: 'PENDING' | 'DEPOSITED' | 'LOCKED' | 'SETTLED'): PushedEventData => ({
  type: 'trade.status_changed',
  data: { tradeId, adId, status, previousStatus: 'PENDING', proofReady: false, bridgerClaimed: false, adCreatorClaimed: false, unlockDue: null },
});

/** Commits events about a trade the way the lifecycle does: the trade row locked, state and events in one transaction. */
async function commit(tradeId: string, events: PushedEventData[], recipients: string[] = []) {
  await knex.transaction(async (trx) => {
    await trx('trades').where({ id: tradeId }).forUpdate().first();
    const last = events[events.length - 1]!.data as { status?: string };
    if (last.status) await trx('trades').where({ id: tradeId }).update({ status: last.status });
    await appendPushedEvents(trx, { tradeId, adId, recipients, events });
  });
}

describe('GET /v1/trades/:id/events', () => {
  it('delivers events committed elsewhere to streams on both replicas, in order, resumes after Last-Event-ID and ends after the terminal state', async () => {
    const tradeId = await insertTrade(knex, route, adId);
    await commit(tradeId, [step(tradeId, 'PENDING')]);
    const onA = await openSse(`${a.url}/v1/trades/${tradeId}/events`);
    const onB = await openSse(`${b.url}/v1/trades/${tradeId}/events`);
    expect(onA.status).toBe(200);
    expect(onA.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect((await onB.waitFor(1)).map((m) => m.id)).toEqual([1]);
    await commit(tradeId, [step(tradeId, 'DEPOSITED')]);
    await onB.waitFor(2);
    onB.abort(); // B's client drops after event 2 ...
    await commit(tradeId, [step(tradeId, 'LOCKED')]);
    // ... and comes back on the other replica with the last id it saw: the stream replays 3, then goes on.
    const resumed = await openSse(`${a.url}/v1/trades/${tradeId}/events`, { 'last-event-id': '2' });
    await resumed.waitFor(1);
    await commit(tradeId, [step(tradeId, 'SETTLED')]);
    await Promise.all([onA.ended, resumed.ended]);
    expect(onA.messages.map((m) => [m.id, m.data.data.status])).toEqual([[1, 'PENDING'], [2, 'DEPOSITED'], [3, 'LOCKED'], [4, 'SETTLED']]);
    expect(resumed.messages.map((m) => m.id)).toEqual([3, 4]);
    expect(onA.messages[3]!).toMatchObject({ event: 'trade.status_changed', data: { type: 'trade.status_changed', data: { tradeId, status: 'SETTLED' } } });
    expect(Date.parse(onA.messages[0]!.data.timestamp)).not.toBeNaN();
    // Everything read and nothing more can come: 204, which stops an EventSource.
    expect((await openSse(`${b.url}/v1/trades/${tradeId}/events`, { 'last-event-id': '4' })).status).toBe(204);
    const late = await openSse(`${b.url}/v1/trades/${tradeId}/events?lastEventId=3`);
    await late.ended;
    expect(late.messages.map((m) => m.id)).toEqual([4]);
  });

  it('loses nothing committed while the LISTEN connections were down: each replica reads the outbox when it reconnects', async () => {
    const listening = () => pushedEventListeners(knex);
    const tradeId = await insertTrade(knex, route, adId);
    const onA = await openSse(`${a.url}/v1/trades/${tradeId}/events`);
    const onB = await openSse(`${b.url}/v1/trades/${tradeId}/events`);
    await commit(tradeId, [step(tradeId, 'PENDING')]);
    await Promise.all([onA.waitFor(1), onB.waitFor(1)]);
    // Every LISTEN connection dies (a PostgreSQL failover, a proxy cutting idle connections) ...
    const before = await listening();
    expect(before.length).toBeGreaterThanOrEqual(2);
    await terminateBackends(knex, before);
    await expect.poll(async () => (await listening()).filter((pid) => before.includes(pid)), { interval: 20 }).toEqual([]);
    // ... and a commit is announced to nobody (the listeners wait a second before reconnecting).
    await commit(tradeId, [step(tradeId, 'DEPOSITED')]);
    expect(await listening()).toEqual([]);
    // The streams still get it, from the outbox, once their replica listens again; then the live path goes on.
    await Promise.all([onA.waitFor(2), onB.waitFor(2)]);
    await commit(tradeId, [step(tradeId, 'SETTLED')]);
    await Promise.all([onA.ended, onB.ended]);
    for (const stream of [onA, onB]) expect(stream.messages.map((m) => [m.id, m.data.data.status])).toEqual([[1, 'PENDING'], [2, 'DEPOSITED'], [3, 'SETTLED']]);
  });

  it('sends heartbeats on an idle stream', async () => {
    const tradeId = await insertTrade(knex, route, adId);
    const idle = await openSse(`${a.url}/v1/trades/${tradeId}/events`);
    await expect.poll(() => idle.comments.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    expect(idle.comments[0]).toBe('heartbeat');
    idle.abort();
  });

  it('answers 404 for an unknown trade and 422 naming Last-Event-ID when it is not an event id', async () => {
    const unknown = await openSse(`${a.url}/v1/trades/00000000-0000-4000-8000-000000000000/events`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ statusCode: 404, error: 'Not Found' });
    const tradeId = await insertTrade(knex, route, adId);
    const bad = await openSse(`${a.url}/v1/trades/${tradeId}/events`, { 'last-event-id': 'abc' });
    expect(bad.status).toBe(422);
    expect(bad.body.message).toEqual(["Last-Event-ID must be a non-negative integer (an event id of this stream), received 'abc'"]);
    const badQuery = await openSse(`${a.url}/v1/trades/${tradeId}/events?lastEventId=-1`);
    expect(badQuery.status).toBe(422);
    expect(JSON.stringify(badQuery.body.message)).toContain('lastEventId');
  });

  it('holds at most SSE_MAX_STREAMS_PER_CLIENT streams per client: one more is 429 until one closes', async () => {
    const tradeId = await insertTrade(knex, route, adId);
    const open = await Promise.all([1, 2, 3].map(() => openSse(`${a.url}/v1/trades/${tradeId}/events`)));
    expect(open.map((s) => s.status)).toEqual([200, 200, 200]);
    const refused = await openSse(`${a.url}/v1/trades/${tradeId}/events`);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    open[0]!.abort();
    await expect.poll(async () => {
      const again = await openSse(`${a.url}/v1/trades/${tradeId}/events`);
      again.abort();
      return again.status;
    }).toBe(200);
    for (const s of open) s.abort();
  });
});

describe('GET /v1/events', () => {
  it("needs a Bearer token, then streams everything about the caller's trades and ads, numbered per user", async () => {
    expect((await openSse(`${a.url}/v1/events`)).status).toBe(401);
    const maker = newEvmAccount();
    const token = (await loginEvm(a, maker)).body.tokens.access;
    const mine = await insertTrade(knex, route, adId, { ad_creator_address: maker.address });
    const other = await insertTrade(knex, route, adId);
    const feed = await openSse(`${a.url}/v1/events`, { authorization: `Bearer ${token}` });
    expect(feed.status).toBe(200);
    await commit(other, [step(other, 'DEPOSITED')], ['0x70997970C51812dc3A010C7d01b50e0d17dc79C8']);
    await commit(mine, [step(mine, 'DEPOSITED')], [maker.address]);
    await knex.transaction((trx) => appendPushedEvents(trx, {
      adId, recipients: [maker.address],
      events: [{ type: 'ad.confirmed', data: { adId, action: 'fundAd', txHash: '0x01', status: 'ACTIVE', poolAmount: '2000', availableAmount: '2000' } }],
    }));
    await feed.waitFor(2);
    expect(feed.messages.map((m) => [m.id, m.event])).toEqual([[1, 'trade.status_changed'], [2, 'ad.confirmed']]);
    expect(feed.messages[0]!.data.data.tradeId).toBe(mine);
    feed.abort();
    const resumed = await openSse(`${a.url}/v1/events`, { authorization: `Bearer ${token}`, 'last-event-id': '1' });
    await resumed.waitFor(1);
    expect(resumed.messages.map((m) => m.id)).toEqual([2]);
    resumed.abort();
    const beyond = await openSse(`${a.url}/v1/events`, { authorization: `Bearer ${token}`, 'last-event-id': '9' });
    expect(beyond.status).toBe(422);
  });

  it('ends when the access token that opened it expires', async () => {
    const user = newEvmAccount();
    const { sub, uid, sid } = jwt.decode((await loginEvm(a, user)).body.tokens.access) as { sub: string; uid: string; sid: string };
    const shortLived = issueAccessToken({ ...a.container.auth.tokens, accessTtlSeconds: 2 }, { userId: uid, account: sub }, sid);
    const feed = await openSse(`${a.url}/v1/events`, { authorization: `Bearer ${shortLived}` });
    expect(feed.status).toBe(200);
    await feed.ended; // the server ended it; the client never aborts here
  });
});
