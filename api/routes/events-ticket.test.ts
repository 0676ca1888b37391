import jwt from 'jsonwebtoken';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessToken } from '../../auth/tokens.ts';
import type { PushedEventData } from '../../domain/index.ts';
import { appendPushedEvents } from '../../db/repositories/pushed-events.ts';
import { insertAd, insertRouteWithChains, insertTrade, type RouteFixture } from '../../test/support/fixtures.ts';
import { startTestService, type TestService } from '../../test/support/service.ts';
import { openSse, type SseConnection } from '../../test/support/sse-client.ts';
import { call, loginEvm, newEvmAccount, type EvmAccount } from '../../test/support/wallets.ts';

/**
 * Stream tickets (issue 29): `POST /v1/events/ticket` (Bearer) gives a single-use ticket that
 * opens `GET /v1/events?ticket=` with no Authorization header, as a browser's EventSource must.
 * test/browser/browser-events.test.ts opens it from a page on another origin in Chromium.
 */

let service: TestService;
let knex: Knex;
let route: RouteFixture;
let adId: string;

beforeAll(async () => {
  service = await startTestService({ SSE_HEARTBEAT_SECONDS: '1', SSE_SESSION_CHECK_SECONDS: '1', WEBHOOK_SWEEP_SECONDS: '3600' });
  knex = service.knex;
  route = await insertRouteWithChains(knex);
  adId = await insertAd(knex, route);
});
afterAll(async () => {
  await service?.close();
});

const deposited = (tradeId: string): PushedEventData => ({
  type: 'trade.status_changed',
  data: { tradeId, adId, status: 'DEPOSITED', previousStatus: 'PENDING', proofReady: false, bridgerClaimed: false, adCreatorClaimed: false, unlockDue: null },
});
/** Commits one event about a new trade to `user`'s feed. */
const publish = async (user: EvmAccount) => {
  const tradeId = await insertTrade(knex, route, adId);
  await knex.transaction((trx) => appendPushedEvents(trx, { tradeId, adId, recipients: [user.address], events: [deposited(tradeId)] }));
  return tradeId;
};
const ticketFor = async (token: string) => call(service, 'POST', '/v1/events/ticket', undefined, token);
const byTicket = (ticket: string, headers: Record<string, string> = {}, query = '') =>
  openSse(`${service.url}/v1/events?ticket=${encodeURIComponent(ticket)}${query}`, headers);
const logout = async (token: string) => (await service.request('/v1/auth/logout', { method: 'POST', headers: { authorization: `Bearer ${token}` } })).status;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('POST /v1/events/ticket and GET /v1/events?ticket=', () => {
  it('gives a signed-in caller a ticket of about a minute that opens its stream once, with no Authorization header; resumes with Last-Event-ID and a new ticket', async () => {
    expect((await call(service, 'POST', '/v1/events/ticket')).status).toBe(401);
    const user = newEvmAccount();
    const token = (await loginEvm(service, user)).body.tokens.access;
    const asked = Date.now();
    const issued = await ticketFor(token);
    expect(issued.status).toBe(200);
    expect(Object.keys(issued.body).sort()).toEqual(['expiresAt', 'ticket']);
    expect(issued.body.ticket).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const lifetime = Date.parse(issued.body.expiresAt) - asked;
    expect(lifetime).toBeGreaterThan(55_000);
    expect(lifetime).toBeLessThanOrEqual(61_000);
    // Only its hash is stored.
    expect(JSON.stringify(await knex('event_stream_tickets').select())).not.toContain(issued.body.ticket);

    const first = await publish(user);
    const feed = await byTicket(issued.body.ticket);
    expect(feed.status).toBe(200);
    expect(feed.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    await feed.waitFor(1);
    const second = await publish(user);
    await feed.waitFor(2);
    expect(feed.messages.map((m) => [m.id, m.data.data.tradeId])).toEqual([[1, first], [2, second]]);
    feed.abort();

    // The same URL again (what EventSource does on reconnect, with Last-Event-ID): the ticket is spent.
    const again = await byTicket(issued.body.ticket, { 'last-event-id': '1' });
    expect(again.status).toBe(401);
    expect(again.body).toEqual({ statusCode: 401, error: 'Unauthorized', code: 'EVENT_TICKET_REJECTED', message: expect.stringMatching(/^ticket was already used/), retryable: false });
    // A new ticket resumes after the last id seen (header or query), missing and repeating nothing.
    const third = await publish(user);
    const resumed = await byTicket((await ticketFor(token)).body.ticket, { 'last-event-id': '2' });
    await resumed.waitFor(1);
    expect(resumed.messages.map((m) => [m.id, m.data.data.tradeId])).toEqual([[3, third]]);
    resumed.abort();
    const byQuery = await byTicket((await ticketFor(token)).body.ticket, {}, '&lastEventId=1');
    await byQuery.waitFor(2);
    expect(byQuery.messages.map((m) => m.id)).toEqual([2, 3]);
    byQuery.abort();
  });

  it('refuses a made-up, malformed, expired or spent ticket with 401 naming the ticket, and a logged-out session\'s ticket', async () => {
    const user = newEvmAccount();
    const token = (await loginEvm(service, user)).body.tokens.access;
    const refused = async (ticket: string) => {
      const answer = await byTicket(ticket);
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      return answer.body.message as string;
    };
    expect(await refused('A'.repeat(43))).toMatch(/^ticket is not known/);
    expect(await refused('not a ticket')).toMatch(/^ticket is not known/);
    const expired = (await ticketFor(token)).body.ticket;
    await knex('event_stream_tickets').update({ expires_at: new Date(Date.now() - 1000) }).where('expires_at', '>', new Date()).andWhere({ used_at: null });
    expect(await refused(expired)).toMatch(/^ticket expired/);
    // A session that logged out: its unused ticket opens nothing.
    const loggedOut = (await ticketFor(token)).body.ticket;
    expect(await logout(token)).toBe(204);
    expect(await refused(loggedOut)).toMatch(/^ticket belongs to a session that was revoked/);
    // A ticket is not a Bearer token, and a Bearer token is not a ticket.
    expect((await openSse(`${service.url}/v1/events`, { authorization: `Bearer ${expired}` })).status).toBe(401);
    expect(await refused(token)).toMatch(/^ticket is not known/);
    // The expired rows go with the auth purge.
    expect((await service.container.authPurger.runOnce()).eventStreamTickets).toBeGreaterThanOrEqual(1);
  });

  it('opens one stream when one ticket is used many times at once', async () => {
    const token = (await loginEvm(service, newEvmAccount())).body.tokens.access;
    const { ticket } = (await ticketFor(token)).body;
    const tries = await Promise.all(Array.from({ length: 8 }, () => byTicket(ticket)));
    expect(tries.map((t) => t.status).sort()).toEqual([200, 401, 401, 401, 401, 401, 401, 401]);
    for (const t of tries) t.abort();
  });

  it("a stream opened by ticket ends when its session is revoked (logout), and at the expiry of the access token that asked", async () => {
    const user = newEvmAccount();
    const tokens = (await loginEvm(service, user)).body.tokens;
    const other = (await loginEvm(service, user)).body.tokens.access; // another session of the same user
    const feed = await byTicket((await ticketFor(tokens.access)).body.ticket);
    const survivor = await byTicket((await ticketFor(other)).body.ticket);
    expect([feed.status, survivor.status]).toEqual([200, 200]);
    await publish(user);
    await Promise.all([feed.waitFor(1), survivor.waitFor(1)]);
    expect(await logout(tokens.access)).toBe(204);
    await publish(user); // committed after the logout: not for the revoked session's stream
    await endsWithin(feed, 5_000);
    expect(feed.messages.map((m) => m.id)).toEqual([1]);
    await survivor.waitFor(2);
    survivor.abort();

    // A ticket asked with an access token that expires in 3 s: it lives no longer, nor does its stream.
    const { sub, uid, sid } = jwt.decode(other) as { sub: string; uid: string; sid: string };
    const shortLived = issueAccessToken({ ...service.container.auth.tokens, accessTtlSeconds: 3 }, { userId: uid, account: sub }, sid);
    const short = (await ticketFor(shortLived)).body;
    expect(Date.parse(short.expiresAt)).toBeLessThanOrEqual(Date.now() + 3_000);
    const brief = await byTicket(short.ticket);
    expect(brief.status).toBe(200);
    await endsWithin(brief, 8_000); // the server ends it; the client never aborts
  });
});

/** Resolves once `stream` ended, or fails after `ms`. */
async function endsWithin(stream: SseConnection, ms: number): Promise<void> {
  await Promise.race([stream.ended, sleep(ms).then(() => { throw new Error(`the stream was still open after ${ms} ms`); })]);
}
