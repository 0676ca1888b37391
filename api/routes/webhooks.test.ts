import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PushedEventData } from '../../domain/index.ts';
import { appendPushedEvents } from '../../db/repositories/pushed-events.ts';
import { pushedEventListeners, terminateBackends } from '../../test/support/pushed-listeners.ts';
import { startTestService, type TestService } from '../../test/support/service.ts';
import { call, loginEvm, newEvmAccount, type EvmAccount } from '../../test/support/wallets.ts';

/**
 * Webhooks end to end on the real service: registration (owner only, URL checked), deliveries
 * signed per Standard Webhooks and verified with the `standardwebhooks` package, retried until a
 * receiver that was down comes back, in order, the log, rotation, disabling and timeouts.
 */

let service: TestService;

beforeAll(async () => {
  service = await startTestService({
    WEBHOOK_RETRY_BASE_SECONDS: '1', WEBHOOK_RETRY_MAX_SECONDS: '1', WEBHOOK_TIMEOUT_SECONDS: '1',
    WEBHOOK_DISABLE_AFTER_FAILURES: '5', WEBHOOK_DISABLE_AFTER_SECONDS: '3', WEBHOOK_SWEEP_SECONDS: '1', WEBHOOK_MAX_ENDPOINTS_PER_USER: '3', METRICS_PORT: '0',
  });
});
afterAll(async () => service?.close());

interface Received { headers: Record<string, string>; body: string }

/** A receiver on loopback whose answer the test sets: a status, or `hang` (never answers). */
async function receiver(): Promise<{ url: string; received: Received[]; answer: number | 'hang'; close(): Promise<void> }> {
  const state = { received: [] as Received[], answer: 200 as number | 'hang' };
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      if (state.answer === 'hang') return;
      state.received.push({ headers: req.headers as Record<string, string>, body });
      res.statusCode = state.answer;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  });
}

async function signedIn(): Promise<{ account: EvmAccount; token: string }> {
  const account = newEvmAccount();
  return { account, token: (await loginEvm(service, account)).body.tokens.access };
}

const statusEvent = (tradeId: string, status: 'DEPOSITED' | 'LOCKED' | 'SETTLED'): PushedEventData => ({
  type: 'trade.status_changed',
  data: { tradeId, adId: randomUUID(), status, previousStatus: 'PENDING', proofReady: false, bridgerClaimed: false, adCreatorClaimed: false, unlockDue: null },
});

/** Commits events about `tradeId` to `address`'s user, as the lifecycle does. */
const commit = (tradeId: string, address: string, events: PushedEventData[]) =>
  service.knex.transaction((trx) => appendPushedEvents(trx, { tradeId, recipients: [address], events }));

describe('/v1/webhooks', () => {
  it('registers, lists and deletes endpoints for their owner only; strangers get 404; a bad URL is 422 naming url', async () => {
    const owner = await signedIn();
    const stranger = await signedIn();
    expect((await call(service, 'POST', '/v1/webhooks', { url: 'https://bot.example.com/h' })).status).toBe(401);
    const bad = await call(service, 'POST', '/v1/webhooks', { url: 'ftp://bot.example.com/h' }, owner.token);
    expect(bad.status).toBe(422);
    expect(bad.body.message).toEqual(["url must be an http(s) URL, received 'ftp://bot.example.com/h'"]);
    expect((await call(service, 'POST', '/v1/webhooks', { url: 'https://bot.example.com/h', secret: 'mine' }, owner.token)).status).toBe(422);
    const created = await call(service, 'POST', '/v1/webhooks', { url: 'https://bot.example.com/h', description: 'my bot' }, owner.token);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ url: 'https://bot.example.com/h', description: 'my bot', status: 'ACTIVE', deliveredThrough: 0 });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const { id } = created.body;
    const listed = await call(service, 'GET', '/v1/webhooks', undefined, owner.token);
    expect(listed.body.data.map((w: any) => w.id)).toEqual([id]);
    expect(listed.body.data[0].secret).toBeUndefined();
    expect((await call(service, 'GET', '/v1/webhooks', undefined, stranger.token)).body.data).toEqual([]);
    for (const [method, path] of [['GET', `/v1/webhooks/${id}`], ['DELETE', `/v1/webhooks/${id}`], ['GET', `/v1/webhooks/${id}/deliveries`], ['POST', `/v1/webhooks/${id}/rotate-secret`], ['POST', `/v1/webhooks/${id}/enable`]] as const) {
      expect((await call(service, method, path, undefined, stranger.token)).status, `${method} ${path}`).toBe(404);
    }
    expect((await call(service, 'GET', `/v1/webhooks/${id}`, undefined, owner.token)).body.secret).toBeUndefined();
    for (let i = 0; i < 2; i++) expect((await call(service, 'POST', '/v1/webhooks', { url: `https://bot.example.com/${i}` }, owner.token)).status).toBe(201);
    expect((await call(service, 'POST', '/v1/webhooks', { url: 'https://bot.example.com/4' }, owner.token)).status).toBe(409);
    const deleted = await service.request(`/v1/webhooks/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${owner.token}` } });
    expect(deleted.status).toBe(204);
    expect((await call(service, 'GET', `/v1/webhooks/${id}`, undefined, owner.token)).status).toBe(404);
  });

  it('a receiver that was down gets every event later, in order per trade, each signature verified with standardwebhooks', async () => {
    const maker = await signedIn();
    const bot = await receiver();
    const created = await call(service, 'POST', '/v1/webhooks', { url: bot.url }, maker.token);
    const verifier = new Webhook(created.body.secret);
    bot.answer = 503; // down
    const [t1, t2] = [randomUUID(), randomUUID()];
    await commit(t1, maker.account.address, [statusEvent(t1, 'DEPOSITED')]);
    await commit(t2, maker.account.address, [statusEvent(t2, 'DEPOSITED')]);
    await commit(t1, maker.account.address, [statusEvent(t1, 'LOCKED'), statusEvent(t1, 'SETTLED')]);
    await expect.poll(() => bot.received.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(2); // it keeps trying
    const refusedAttempts = bot.received.length;
    bot.answer = 200; // back up
    await commit(t2, maker.account.address, [statusEvent(t2, 'LOCKED')]);
    await expect.poll(() => bot.received.length - refusedAttempts, { timeout: 30_000 }).toBeGreaterThanOrEqual(5);
    const delivered = bot.received.slice(refusedAttempts).map((r) => ({ ...r, event: verifier.verify(r.body, r.headers) as any }));
    // Exactly once each after it came back, in the order committed (so in order per trade).
    expect(delivered.map((d) => `${d.event.data.tradeId === t1 ? 't1' : 't2'}:${d.event.data.status}`))
      .toEqual(['t1:DEPOSITED', 't2:DEPOSITED', 't1:LOCKED', 't1:SETTLED', 't2:LOCKED']);
    expect(delivered.every((d) => d.event.type === 'trade.status_changed' && typeof d.event.timestamp === 'string')).toBe(true);
    // The refused attempts carried the first event, with the same webhook-id each time.
    expect(new Set(bot.received.slice(0, refusedAttempts).map((r) => r.headers['webhook-id']))).toEqual(new Set([delivered[0]!.headers['webhook-id']]));
    // A tampered body fails verification.
    expect(() => verifier.verify(delivered[0]!.body.replace('DEPOSITED', 'SETTLED'), delivered[0]!.headers)).toThrow();
    // The receiver counts a delivery before the dispatcher has logged its answer: wait for the log.
    const readLog = async () => (await call(service, 'GET', `/v1/webhooks/${created.body.id}/deliveries?limit=100`, undefined, maker.token)).body.data;
    await expect.poll(async () => (await readLog()).filter((d: any) => d.succeeded).length, { timeout: 10_000 }).toBe(5);
    const log = { body: { data: await readLog() } };
    expect(log.body.data.filter((d: any) => !d.succeeded).every((d: any) => d.statusCode === 503 && d.eventSeq === 1)).toBe(true);
    expect(log.body.data.filter((d: any) => d.succeeded).map((d: any) => d.eventSeq)).toEqual([5, 4, 3, 2, 1]);
    expect((await call(service, 'GET', `/v1/webhooks/${created.body.id}`, undefined, maker.token)).body).toMatchObject({ deliveredThrough: 5, consecutiveFailures: 0 });
    await bot.close();
  });

  it('delivers what was committed while no process listened for commits (the sweep reads the outbox)', async () => {
    const maker = await signedIn();
    const bot = await receiver();
    const created = await call(service, 'POST', '/v1/webhooks', { url: bot.url }, maker.token);
    const listening = () => pushedEventListeners(service.knex);
    const before = await listening();
    expect(before.length).toBeGreaterThanOrEqual(1);
    await terminateBackends(service.knex, before);
    await expect.poll(async () => (await listening()).filter((pid) => before.includes(pid)), { interval: 20 }).toEqual([]);
    const tradeId = randomUUID();
    await commit(tradeId, maker.account.address, [statusEvent(tradeId, 'DEPOSITED')]); // its NOTIFY reaches nobody
    expect(await listening()).toEqual([]);
    await expect.poll(() => bot.received.length, { timeout: 20_000 }).toBe(1);
    expect(new Webhook(created.body.secret).verify(bot.received[0]!.body, bot.received[0]!.headers)).toMatchObject({ data: { tradeId, status: 'DEPOSITED' } });
    await bot.close();
  });

  it('after a rotation signs with both secrets, so either verifies', async () => {
    const maker = await signedIn();
    const bot = await receiver();
    const created = await call(service, 'POST', '/v1/webhooks', { url: bot.url }, maker.token);
    const rotated = await call(service, 'POST', `/v1/webhooks/${created.body.id}/rotate-secret`, undefined, maker.token);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    await commit(randomUUID(), maker.account.address, [statusEvent(randomUUID(), 'DEPOSITED')]);
    await expect.poll(() => bot.received.length, { timeout: 20_000 }).toBe(1);
    const [delivery] = bot.received;
    expect(delivery!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secret of [created.body.secret, rotated.body.secret]) expect(new Webhook(secret).verify(delivery!.body, delivery!.headers)).toMatchObject({ type: 'trade.status_changed' });
    await bot.close();
  });

  it('a receiver that never answers costs one timeout per attempt; failing long enough disables the endpoint; enabling resumes it', async () => {
    const maker = await signedIn();
    const bot = await receiver();
    bot.answer = 'hang';
    const created = await call(service, 'POST', '/v1/webhooks', { url: bot.url }, maker.token);
    const { id } = created.body;
    await commit(randomUUID(), maker.account.address, [statusEvent(randomUUID(), 'DEPOSITED')]);
    await expect.poll(async () => (await call(service, 'GET', `/v1/webhooks/${id}`, undefined, maker.token)).body.status, { timeout: 60_000, interval: 500 }).toBe('DISABLED');
    const endpoint = (await call(service, 'GET', `/v1/webhooks/${id}`, undefined, maker.token)).body;
    expect(endpoint.disabledReason).toMatch(/failed attempts in a row since .*no answer within 1000 ms/);
    const log = (await call(service, 'GET', `/v1/webhooks/${id}/deliveries`, undefined, maker.token)).body.data;
    expect(log.length).toBeGreaterThanOrEqual(5);
    expect(log.every((d: any) => !d.succeeded && d.error === 'no answer within 1000 ms' && d.statusCode === null)).toBe(true);
    expect(log.map((d: any) => d.attempt)).toEqual(log.map((_: unknown, i: number) => log.length - i));
    const metrics = await (await fetch(`${service.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/relayer_webhook_attempts_total\{outcome="failed"\} [1-9]/);
    expect(metrics).toMatch(/relayer_webhook_endpoints_disabled_total [1-9]/);
    expect(metrics).toMatch(/relayer_event_streams 0/);
    bot.answer = 200;
    const enabled = await call(service, 'POST', `/v1/webhooks/${id}/enable`, undefined, maker.token);
    expect(enabled.body).toMatchObject({ status: 'ACTIVE', consecutiveFailures: 0 });
    await expect.poll(() => bot.received.length, { timeout: 20_000 }).toBe(1);
    await bot.close();
  });

  it('enabling an ACTIVE endpoint changes nothing: enabled in a loop, a failing endpoint keeps its failure count and backoff and is still disabled', async () => {
    const maker = await signedIn();
    const bot = await receiver();
    bot.answer = 500;
    const { id } = (await call(service, 'POST', '/v1/webhooks', { url: bot.url }, maker.token)).body;
    await commit(randomUUID(), maker.account.address, [statusEvent(randomUUID(), 'DEPOSITED')]);
    // The attack: "enable" the endpoint every 100 ms while it fails. Were each call to clear the
    // failure record and the backoff, the endpoint would be retried at once and never disabled.
    const counts: number[] = [];
    const deadline = Date.now() + 20_000;
    let status = 'ACTIVE';
    while (status === 'ACTIVE' && Date.now() < deadline) {
      const enabled = await call(service, 'POST', `/v1/webhooks/${id}/enable`, undefined, maker.token);
      expect(enabled.status).toBe(200);
      counts.push(enabled.body.consecutiveFailures);
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await call(service, 'GET', `/v1/webhooks/${id}`, undefined, maker.token)).body.status;
    }
    expect(status).toBe('DISABLED');
    expect(Math.max(...counts)).toBeGreaterThanOrEqual(2);
    // Backoff held: attempts came at the retry pace (WEBHOOK_RETRY_BASE_SECONDS=1), not one per enable.
    const log = (await call(service, 'GET', `/v1/webhooks/${id}/deliveries`, undefined, maker.token)).body.data;
    expect(log.length).toBeLessThan(counts.length);
    await bot.close();
  });

  it('holds the per-user endpoint cap against registrations sent in parallel', async () => {
    const owner = await signedIn();
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) =>
      call(service, 'POST', '/v1/webhooks', { url: `https://bot.example.com/parallel/${i}` }, owner.token)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 409, 409, 409, 409, 409, 409, 409]);
    expect(answers.find((a) => a.status === 409)!.body.message).toMatch(/at most 3 webhook endpoints per user/);
    expect((await call(service, 'GET', '/v1/webhooks', undefined, owner.token)).body.data).toHaveLength(3);
  });

  it('pages the whole delivery log with a cursor, newest first, none skipped or repeated', async () => {
    const owner = await signedIn();
    const created = await call(service, 'POST', '/v1/webhooks', { url: 'https://bot.example.com/log' }, owner.token);
    const { id } = created.body;
    // 130 attempts in the log (more than the largest page), as the dispatcher writes them.
    await service.knex('webhook_deliveries').insert(Array.from({ length: 130 }, (_, i) => ({
      endpoint_id: id, event_id: i + 1, seq: i + 1, message_id: `msg_${i + 1}`, attempt: 1, succeeded: true, status_code: 204, error: null, duration_ms: 3,
    })));
    const seen: number[] = [];
    let cursor: string | null = null;
    const pages: number[] = [];
    do {
      const query: string = cursor === null ? '?limit=50' : `?limit=50&cursor=${cursor}`;
      const page = await call(service, 'GET', `/v1/webhooks/${id}/deliveries${query}`, undefined, owner.token);
      expect(page.status).toBe(200);
      pages.push(page.body.data.length);
      seen.push(...page.body.data.map((d: any) => d.eventSeq));
      cursor = page.body.nextCursor;
    } while (cursor !== null);
    expect(pages).toEqual([50, 50, 30]);
    expect(seen).toEqual(Array.from({ length: 130 }, (_, i) => 130 - i));
    const first = await call(service, 'GET', `/v1/webhooks/${id}/deliveries`, undefined, owner.token);
    expect(first.body.data).toHaveLength(25);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    // A cursor of another list, or none this service issued: 422 naming cursor.
    const chains = await call(service, 'GET', '/v1/chains?limit=1');
    for (const bad of [chains.body.nextCursor ?? Buffer.from('["chains","2026-11-24T00:00:00Z","00000000-0000-4000-8000-000000000000"]').toString('base64url'), 'not-a-cursor']) {
      const refused = await call(service, 'GET', `/v1/webhooks/${id}/deliveries?cursor=${bad}`, undefined, owner.token);
      expect(refused.status).toBe(422);
      expect(refused.body.message.join(' ')).toMatch(/^cursor /);
    }
  });
});

describe('Idempotency-Keys per user (MAX_IDEMPOTENCY_KEYS_PER_USER, 1,000 by default)', () => {
  /** A POST with an Idempotency-Key; the raw text too, for comparing a replay byte for byte. */
  const withKey = async (path: string, body: unknown, token: string, key: string) => {
    const response = await service.request(path, {
      method: 'POST', body: JSON.stringify(body),
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: JSON.parse(text) };
  };
  const refusedCount = async () =>
    Number((await (await fetch(`${service.metricsUrl}/metrics`)).text()).match(/^relayer_idempotency_keys_refused_total (\d+)$/m)?.[1] ?? 'NaN');

  it('refuses a user\'s 1,001st live key with 429 IDEMPOTENCY_KEYS_EXHAUSTED and Retry-After; a held key still replays; of concurrent new keys at the limit, one passes', async () => {
    const owner = await signedIn();
    const knex = service.knex;
    const first = await withKey('/v1/webhooks', { url: 'https://bot.example.com/keys' }, owner.token, 'key-0001');
    expect(first.status).toBe(201);
    const enable = `/v1/webhooks/${first.body.id}/enable`;
    // 998 more answered keys of the last hours, stored as the service stores them (one request each would take minutes here).
    const stored = await knex('idempotency_keys').where({ key: 'key-0001' }).first();
    await knex.batchInsert('idempotency_keys', Array.from({ length: 998 }, (_, i) => ({
      ...stored, key: `key-${String(i + 2).padStart(4, '0')}`, claim: randomUUID(),
    })), 500);
    const refusedBefore = await refusedCount();

    // Eight new keys at once with room for one: exactly one passes (claims of a user are counted one at a time).
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => withKey(enable, {}, owner.token, `burst-${i}`)));
    expect(burst.map((a) => a.status).sort()).toEqual([200, 429, 429, 429, 429, 429, 429, 429]);
    expect(await knex('idempotency_keys').where({ user_id: stored.user_id }).count({ n: '*' }).first()).toEqual({ n: 1000 });

    // The 1,001st: refused, nothing stored, told when a key frees (the oldest expires in about 24 h).
    const over = await withKey(enable, {}, owner.token, 'key-1001');
    expect(over.status).toBe(429);
    expect(over.body).toEqual({
      statusCode: 429, error: 'Too Many Requests', code: 'IDEMPOTENCY_KEYS_EXHAUSTED', retryable: true,
      message: expect.stringMatching(/^Idempotency-Key: you hold 1000 keys of the last 24 hours/),
    });
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(86_000);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    expect(await knex('idempotency_keys').where({ key: 'key-1001' }).first()).toBeUndefined();
    expect(await refusedCount()).toBe(refusedBefore + 8);

    // Replaying a key already held is no new key: the first answer, byte for byte.
    const replay = await withKey('/v1/webhooks', { url: 'https://bot.example.com/keys' }, owner.token, 'key-0001');
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.text]).toEqual([201, 'true', first.text]);
    // Without the header the request still runs; another user's keys are their own.
    expect((await call(service, 'POST', enable, {}, owner.token)).status).toBe(200);
    expect((await withKey('/v1/webhooks', { url: 'https://bot.example.com/other' }, (await signedIn()).token, 'key-1001')).status).toBe(201);

    // When the oldest key expires, a new one fits again.
    await knex('idempotency_keys').where({ user_id: stored.user_id, key: 'key-0002' }).update({ expires_at: knex.raw(`now() - interval '1 second'`) });
    expect((await withKey(enable, {}, owner.token, 'key-1001')).status).toBe(200);
    expect((await withKey(enable, {}, owner.token, 'key-1002')).status).toBe(429);
  });
});
