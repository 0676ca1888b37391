import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/config.ts';
import { resolveSecrets } from '../config/secrets.ts';
import { createNotifications, type Notifications } from '../db/notifications.ts';
import { createSession } from '../db/repositories/sessions.ts';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { terminateBackends } from '../test/support/pushed-listeners.ts';
import { createAuthService, type AuthService } from './service.ts';
import { createSessionCache, type SessionCache, type SessionCacheOptions } from './session-cache.ts';
import { issueAccessToken } from './tokens.ts';

/**
 * The session cache over a real PostgreSQL: what it serves, and when it reads the database again. The
 * database reads are counted on the knex the auth service uses (its `query` events naming `sessions`).
 */

let db: TestDatabase;
let config: ReturnType<typeof loadConfig>;
const opened: { notifications: Notifications; cache: SessionCache; count: (query: { sql: string }) => void }[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  config = loadConfig({ NODE_ENV: 'test', DATABASE_URL: db.url, LOG_LEVEL: 'silent', JWT_SECRET: randomBytes(32).toString('hex') });
});
afterEach(async () => {
  for (const { cache, notifications, count } of opened.splice(0)) {
    db.knex.off('query', count);
    cache.close();
    await notifications.close();
  }
});
afterAll(async () => { await db?.drop(); });

/** An auth service with a cache of its own on a LISTEN connection of its own: one api process as far as sessions go. */
function apiProcess(options: SessionCacheOptions & { reconnectDelayMs?: number } = {}): { auth: AuthService; cache: SessionCache; reads: () => number } {
  const notifications = createNotifications(db.knex, { reconnectDelayMs: options.reconnectDelayMs });
  const cache = createSessionCache(notifications, options);
  let reads = 0;
  const knex: Knex = db.knex;
  const count = (query: { sql: string }) => { if (/from "sessions"/.test(query.sql)) reads += 1; };
  knex.on('query', count);
  opened.push({ notifications, cache, count });
  const auth = createAuthService({ config, secrets: resolveSecrets(config), knex, sessionCache: cache });
  return { auth, cache, reads: () => reads };
}

/** A signed-in user's live session, ending `lifetimeSeconds` from now, and an access token of it. */
async function signedIn(auth: AuthService, lifetimeSeconds = 3600): Promise<{ userId: string; sessionId: string; token: string; end: Date }> {
  const [user] = await db.knex('users').insert({}).returning<{ id: string }[]>('id');
  const address = `0x${randomBytes(20).toString('hex')}`;
  await db.knex('wallets').insert({ user_id: user!.id, chain_kind: 'EVM', address });
  const end = new Date((Math.floor(Date.now() / 1000) + lifetimeSeconds) * 1000);
  const sessionId = await createSession(db.knex, user!.id, end);
  return { userId: user!.id, sessionId, end, token: issueAccessToken(auth.tokens, { userId: user!.id, account: address }, sessionId, end) };
}

const listening = (cache: SessionCache, want: boolean, what: string) =>
  expect.poll(() => cache.trusted(), { timeout: 10_000, message: `the cache's LISTEN connection to be ${what}` }).toBe(want);

/** The backends LISTENing on session_changes (their last statement), the caller's own excluded. */
async function sessionListeners(): Promise<number[]> {
  const result = await db.knex.raw(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN session_changes' AND pid <> pg_backend_pid()",
  );
  return result.rows.map((row: { pid: number }) => row.pid);
}

describe('the session cache', () => {
  it('answers a live session without reading the database, and reads it again once the session is revoked by hand-written SQL', async () => {
    const { auth, cache, reads } = apiProcess();
    const session = await signedIn(auth);
    await auth.authenticate(session.token);
    await listening(cache, true, 'up');
    await auth.authenticate(session.token);
    const before = reads();
    for (let i = 0; i < 5; i += 1) expect((await auth.authenticate(session.token)).principal.sessionId).toBe(session.sessionId);
    expect(reads()).toBe(before);
    await db.knex('sessions').where({ id: session.sessionId }).update({ revoked_at: db.knex.fn.now(), revoked_reason: 'operator' });
    await expect.poll(() => auth.authenticate(session.token).then(() => 'served', (error: Error) => error.message), {
      timeout: 1_000, message: 'the revoked session to be refused within a second',
    }).toMatch(/session was revoked/);
  });

  it('while its LISTEN connection is down, reads every session from the database: one revoked meanwhile is refused at once', async () => {
    // A reconnect far away: the whole check runs while the connection is down.
    const { auth, cache, reads } = apiProcess({ reconnectDelayMs: 60_000 });
    const session = await signedIn(auth);
    const other = await signedIn(auth);
    await auth.authenticate(session.token);
    await listening(cache, true, 'up');
    await auth.authenticate(session.token);
    await auth.authenticate(other.token);
    expect(cache.size).toBe(2);
    await terminateBackends(db.knex, await sessionListeners());
    await listening(cache, false, 'seen down');
    expect(cache.size).toBe(0);
    await db.knex('sessions').where({ id: session.sessionId }).update({ revoked_at: db.knex.fn.now(), revoked_reason: 'operator' });
    await expect(auth.authenticate(session.token)).rejects.toThrow(/session was revoked/);
    const before = reads();
    await auth.authenticate(other.token);
    await auth.authenticate(other.token);
    expect(reads()).toBe(before + 2);
    expect(cache.size).toBe(0);
    expect(cache.trusted()).toBe(false);
  });

  it('after reconnecting trusts nothing it held before: a session revoked while it was down is refused', async () => {
    const { auth, cache } = apiProcess({ reconnectDelayMs: 200 });
    const session = await signedIn(auth);
    await auth.authenticate(session.token);
    await listening(cache, true, 'up');
    await auth.authenticate(session.token);
    const before = await sessionListeners();
    await terminateBackends(db.knex, before);
    await db.knex('sessions').where({ id: session.sessionId }).update({ revoked_at: db.knex.fn.now(), revoked_reason: 'operator' });
    await expect.poll(async () => (await sessionListeners()).filter((pid) => !before.includes(pid)).length, {
      timeout: 10_000, message: 'the LISTEN connection to come back',
    }).toBe(1);
    await listening(cache, true, 'back');
    await expect(auth.authenticate(session.token)).rejects.toThrow(/session was revoked/);
  });

  it("hears a wallet linked to the session's user: the next request's principal carries it", async () => {
    const { auth, cache } = apiProcess();
    const session = await signedIn(auth);
    await auth.authenticate(session.token);
    await listening(cache, true, 'up');
    expect((await auth.authenticate(session.token)).principal.wallets.STELLAR).toBeUndefined();
    const stellar = `G${'A'.repeat(55)}`;
    await db.knex('wallets').insert({ user_id: session.userId, chain_kind: 'STELLAR', address: stellar });
    await expect.poll(async () => (await auth.authenticate(session.token)).principal.wallets.STELLAR, {
      timeout: 1_000, message: 'the linked wallet to reach the cached principal within a second',
    }).toBe(stellar);
  });

  it('holds at most maxEntries sessions, the least recently used evicted', async () => {
    const { auth, cache, reads } = apiProcess({ maxEntries: 3 });
    const sessions = [];
    for (let i = 0; i < 5; i += 1) sessions.push(await signedIn(auth));
    await auth.authenticate(sessions[0]!.token);
    await listening(cache, true, 'up');
    for (const session of sessions) await auth.authenticate(session.token);
    expect(cache.size).toBe(3);
    const before = reads();
    for (const session of sessions.slice(2)) await auth.authenticate(session.token);
    expect(reads()).toBe(before);
    await auth.authenticate(sessions[0]!.token);
    expect(reads()).toBe(before + 1);
    expect(cache.size).toBe(3);
  });

  it("never serves an entry past the session's end, nor past its maximum age", async () => {
    let skew = 0;
    const { auth, cache, reads } = apiProcess({ maxAgeMs: 60_000, now: () => Date.now() + skew });
    const short = await signedIn(auth, 30);
    const long = await signedIn(auth);
    await auth.authenticate(short.token);
    await listening(cache, true, 'up');
    await auth.authenticate(short.token);
    await auth.authenticate(long.token);
    const before = reads();
    // The cache's clock past the short session's end: that one is read again, the long one is not.
    skew = 31_000;
    await auth.authenticate(short.token).catch(() => undefined);
    await auth.authenticate(long.token);
    expect(reads()).toBe(before + 1);
    // Past the maximum age: read again too.
    skew = 61_000;
    await auth.authenticate(long.token);
    expect(reads()).toBe(before + 2);
  });

  it('once the process closes its LISTEN connection (shutdown), serves nothing from the cache and still answers from the database', async () => {
    const notifications = createNotifications(db.knex);
    const cache = createSessionCache(notifications);
    opened.push({ notifications, cache, count: () => undefined });
    const auth = createAuthService({ config, secrets: resolveSecrets(config), knex: db.knex, sessionCache: cache });
    const session = await signedIn(auth);
    await notifications.close();
    expect((await auth.authenticate(session.token)).principal.sessionId).toBe(session.sessionId);
    expect(cache.trusted()).toBe(false);
    expect(cache.size).toBe(0);
  });
});
