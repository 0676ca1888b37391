import jwt from 'jsonwebtoken';
import type { Knex } from 'knex';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessToken } from '../auth/tokens.ts';
import { appendPushedEvents } from '../db/repositories/pushed-events.ts';
import { TERMINAL_TRADE_STATUSES, type PushedEventData } from '../domain/index.ts';
import { insertAd, insertRouteWithChains, insertTrade, type RouteFixture } from '../test/support/fixtures.ts';
import { startTestService, type TestService } from '../test/support/service.ts';
import { startTcpProxy } from '../test/support/tcp-proxy.ts';
import { loginEvm, newEvmAccount } from '../test/support/wallets.ts';
import { INITIAL_STATE, type TradeState } from '../trades/lifecycle/index.ts';
import { tradeEventsOf } from '../trades/lifecycle/pushed-events.ts';
import { createRelayerClient, EVENT_STREAM_PATHS, followEvents, followTrade, StreamError, type StreamEvent } from './index.js';

/**
 * The stream helpers of the client package in Node (global fetch, streamed): followTrade stops at
 * the terminal status having seen every claim; both resume after a dropped connection with the last
 * id; followEvents asks `getAccessToken` again when the service ends a stream at its token's expiry.
 * test/browser/browser-events.test.ts runs followEvents in Chromium (EventSource and tickets).
 */

let service: TestService;
let knex: Knex;
let route: RouteFixture;
let adId: string;

beforeAll(async () => {
  service = await startTestService({ SSE_HEARTBEAT_SECONDS: '1', WEBHOOK_SWEEP_SECONDS: '3600' });
  knex = service.knex;
  route = await insertRouteWithChains(knex);
  adId = await insertAd(knex, route);
});
afterAll(async () => {
  await service?.close();
});

/** Commits a lifecycle transition's events the way trades/activities.ts does: the trade row locked, its status and the events in one transaction. */
async function transition(tradeId: string, before: TradeState, after: TradeState, event: Parameters<typeof tradeEventsOf>[3], recipients: string[] = []) {
  await knex.transaction(async (trx) => {
    await trx('trades').where({ id: tradeId }).forUpdate().first();
    await trx('trades').where({ id: tradeId }).update({ status: after.status });
    await appendPushedEvents(trx, { tradeId, adId, recipients, events: tradeEventsOf({ tradeId, adId }, before, after, event) });
  });
}
const deposited = (tradeId: string): PushedEventData => ({
  type: 'trade.status_changed',
  data: { tradeId, adId, status: 'DEPOSITED', previousStatus: 'PENDING', proofReady: false, bridgerClaimed: false, adCreatorClaimed: false, unlockDue: null },
});
const steps = (events: StreamEvent[]) => events.map((e) => {
  const data = e.data.data as { status: string; side?: string };
  return `${e.id}:${e.event}${data.side ? `:${data.side}` : `:${data.status}`}`;
});

describe('followTrade (Node)', () => {
  it('delivers every event once across a dropped connection and stops at the terminal status, after the last claim', async () => {
    const tradeId = await insertTrade(knex, route, adId);
    const target = new URL(service.url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    const seen: StreamEvent[] = [];
    const reconnects: unknown[] = [];
    const locked: TradeState = { ...INITIAL_STATE, status: 'LOCKED', proof: 'ready' };
    await transition(tradeId, INITIAL_STATE, { ...INITIAL_STATE, status: 'DEPOSITED', proof: 'running' }, { type: 'DEPOSIT_CONFIRMED' });
    const followed = followTrade(tradeId, { baseUrl: `http://${proxy.address}/`, onEvent: (e) => { seen.push(e); }, onReconnect: (i) => { reconnects.push(i); }, retryMs: 100 });
    await expect.poll(() => seen.length).toBe(1);
    proxy.cut(); // the connection drops; the trade goes on meanwhile
    await transition(tradeId, { ...INITIAL_STATE, status: 'DEPOSITED', proof: 'running' }, locked, { type: 'LOCK_CONFIRMED' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    proxy.restore();
    await transition(tradeId, locked, { ...locked, bridgerClaimed: true }, { type: 'UNLOCK_CONFIRMED', side: 'ad' });
    await transition(tradeId, { ...locked, bridgerClaimed: true }, { ...locked, status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true }, { type: 'UNLOCK_CONFIRMED', side: 'order' });
    const end = await followed;
    await proxy.close();
    expect(steps(seen)).toEqual([
      '1:trade.status_changed:DEPOSITED', '2:trade.status_changed:LOCKED', '3:trade.proof_ready:LOCKED', '4:trade.unlock_due:ad',
      '5:trade.claimed:ad', '6:trade.unlock_due:order', '7:trade.claimed:order', '8:trade.status_changed:SETTLED',
    ]);
    expect(end).toEqual({ lastEventId: 8, reason: 'terminal' });
    expect(reconnects[0]).toMatchObject({ lastEventId: 1 });
    // Picked up later from where it stopped: nothing more (204).
    expect(await followTrade(tradeId, { baseUrl: service.url, lastEventId: 8, onEvent: () => { throw new Error('nothing expected'); } })).toEqual({ lastEventId: 8, reason: 'ended' });
  });

  it('rejects with StreamError for an unknown trade, and with the handler\'s error when onEvent throws', async () => {
    const unknown = followTrade('00000000-0000-4000-8000-000000000000', { baseUrl: service.url, onEvent: () => undefined });
    await expect(unknown).rejects.toBeInstanceOf(StreamError);
    await expect(unknown).rejects.toMatchObject({ status: 404, body: { statusCode: 404 } });
    const tradeId = await insertTrade(knex, route, adId);
    await transition(tradeId, INITIAL_STATE, { ...INITIAL_STATE, status: 'DEPOSITED', proof: 'running' }, { type: 'DEPOSIT_CONFIRMED' });
    await expect(followTrade(tradeId, { baseUrl: service.url, onEvent: () => { throw new Error('my bug'); } })).rejects.toThrow('my bug');
  });
});

describe('followEvents (Node: fetch and a Bearer token)', () => {
  it('asks getAccessToken again when the service ends the stream at its token\'s expiry, and resumes after the last id', async () => {
    const user = newEvmAccount();
    const token = (await loginEvm(service, user)).body.tokens.access;
    const { sub, uid, sid } = jwt.decode(token) as { sub: string; uid: string; sid: string };
    const shortLived = issueAccessToken({ ...service.container.auth.tokens, accessTtlSeconds: 2 }, { userId: uid, account: sub }, sid);
    const given: string[] = [];
    const seen: StreamEvent[] = [];
    const stop = new AbortController();
    const followed = followEvents({
      baseUrl: service.url, signal: stop.signal, onEvent: (e) => { seen.push(e); },
      getAccessToken: () => { const next = given.length === 0 ? shortLived : token; given.push(next); return next; },
    });
    const publish = async () => {
      const tradeId = await insertTrade(knex, route, adId);
      await knex.transaction((trx) => appendPushedEvents(trx, { tradeId, adId, recipients: [user.address], events: [deposited(tradeId)] }));
      return tradeId;
    };
    const first = await publish();
    await expect.poll(() => seen.length).toBe(1);
    await expect.poll(() => given.length, { timeout: 6_000 }).toBe(2); // the first stream ended with its token
    const second = await publish();
    await expect.poll(() => seen.length).toBe(2);
    stop.abort();
    expect(await followed).toEqual({ lastEventId: 2, reason: 'aborted' });
    expect(seen.map((e) => [e.id, (e.data.data as { tradeId: string }).tradeId])).toEqual([[1, first], [2, second]]);
    // A token that is refused (twice: asked again once) ends the follow with the 401.
    await expect(followEvents({ baseUrl: service.url, onEvent: () => undefined, getAccessToken: () => 'not-a-token' })).rejects.toMatchObject({ status: 401 });
  });
});

describe('the typed client and the streams', () => {
  it('reads a stream GET as text, not JSON, and knows which operations are streams', async () => {
    const document = JSON.parse(readFileSync(new URL('./openapi.json', import.meta.url), 'utf8')) as { paths: Record<string, Record<string, { responses: Record<string, { content?: object }> }>> };
    const streams = Object.entries(document.paths).filter(([, item]) => Object.values(item).some((op) => 'text/event-stream' in (op.responses['200']?.content ?? {}))).map(([path]) => path);
    expect(streams.sort()).toEqual([...EVENT_STREAM_PATHS].sort());
    const tradeId = await insertTrade(knex, route, adId);
    await transition(tradeId, INITIAL_STATE, { ...INITIAL_STATE, status: 'EXPIRED' }, { type: 'RESERVATION_EXPIRED' });
    const api = createRelayerClient(service.url);
    const { data, error, response } = await api.GET('/v1/trades/{id}/events', { params: { path: { id: tradeId } } });
    expect(error).toBeUndefined();
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(typeof data).toBe('string');
    const text: string | undefined = data; // typed as the stream's text too
    expect(text).toBe(data);
    expect(data).toMatch(/^retry: 2000\n\nid: 1\nevent: trade\.expired\n/);
    expect(data).toContain('id: 2\nevent: trade.status_changed\n');
    expect(TERMINAL_TRADE_STATUSES.has('EXPIRED')).toBe(true);
  });
});
