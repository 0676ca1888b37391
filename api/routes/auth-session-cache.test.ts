import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import { start, type RunningService } from '../../entrypoints/service.ts';
import { terminateBackends } from '../../test/support/pushed-listeners.ts';
import { startTestService, type TestService } from '../../test/support/service.ts';
import { call, loginEvm, newEvmAccount } from '../../test/support/wallets.ts';

/**
 * The attacker's view of the session cache: two api processes on one PostgreSQL, each with its own
 * cache and LISTEN connection. A token ended on one is refused on the other within a second, and one
 * ended while the other could not hear it is refused there too.
 */

const JWT_SECRET = randomBytes(32).toString('hex');
let a: TestService;
let b: RunningService;
let dataDir: string;

beforeAll(async () => {
  a = await startTestService({ JWT_SECRET });
  dataDir = mkdtempSync(path.join(tmpdir(), 'relayer-session-cache-'));
  b = await start(loadConfig({
    NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: a.db.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent', JWT_SECRET,
    RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000', BOOKS_AUDIT_CRON: 'off', RETENTION_CRON: 'off', STELLAR_DEVNET: 'off',
    KEEPER_ENABLED: 'false',
  }), pino({ level: 'silent' }), { migrate: false });
}, 120_000);

afterAll(async () => {
  await b?.stop();
  await a?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const meOn = async (service: RunningService, token: string) =>
  (await fetch(`${service.url}/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } })).status;

/** Signs in on A and has B serve the token until B's cache holds it (B's LISTEN connection up). */
async function signedInAndCachedOnB(): Promise<{ access: string; refresh: string }> {
  const { tokens } = (await loginEvm(a, newEvmAccount())).body;
  expect(await meOn(b, tokens.access)).toBe(200);
  await expect.poll(() => b.container.sessionCache.trusted(), { timeout: 10_000, message: "B's session cache to be listening" }).toBe(true);
  expect(await meOn(b, tokens.access)).toBe(200);
  const sid = (jwt.decode(tokens.access) as { sid: string }).sid;
  expect(b.container.sessionCache.get(sid, (jwt.decode(tokens.access) as { uid: string }).uid)).toBeDefined();
  return tokens;
}

/** Polls B until it answers `token` 401; the milliseconds it took, or throws after `limitMs` naming what it waited for. */
async function refusedOnB(token: string, limitMs: number, what: string): Promise<number> {
  const began = performance.now();
  for (;;) {
    if (await meOn(b, token) === 401) return performance.now() - began;
    if (performance.now() - began > limitMs) throw new Error(`waited ${limitMs} ms for B to refuse a token ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a session ended on one api process', () => {
  it('a token signed out on A is refused on B within a second', async () => {
    const tokens = await signedInAndCachedOnB();
    expect((await a.request('/v1/auth/logout', { method: 'POST', headers: { authorization: `Bearer ${tokens.access}` } })).status).toBe(204);
    const after = await refusedOnB(tokens.access, 1_000, 'signed out on A');
    console.info(`sign-out on A refused on B after ${after.toFixed(0)} ms`);
    expect(await meOn(a, tokens.access)).toBe(401);
  });

  it("a refresh token presented twice on A (the family revoked) makes B refuse the session's access token within a second", async () => {
    const tokens = await signedInAndCachedOnB();
    expect((await call(a, 'POST', '/v1/auth/refresh', { refresh: tokens.refresh })).status).toBe(200);
    expect((await call(a, 'POST', '/v1/auth/refresh', { refresh: tokens.refresh })).status).toBe(401);
    await refusedOnB(tokens.access, 1_000, 'whose refresh token was reused on A');
  });

  it("a token revoked while B's LISTEN connection was down is refused by B, while it is down and once it reconnects", async () => {
    const tokens = await signedInAndCachedOnB();
    const listeners = async () => (await a.knex.raw(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()",
    )).rows.map((row: { pid: number }) => row.pid) as number[];
    const before = await listeners();
    await terminateBackends(a.knex, before);
    await expect.poll(() => b.container.sessionCache.trusted(), { timeout: 10_000, message: 'B to see its LISTEN connection drop' }).toBe(false);
    // An operator's revocation by hand: its notice reaches no process (their connections are gone).
    const sid = (jwt.decode(tokens.access) as { sid: string }).sid;
    await a.knex('sessions').where({ id: sid }).update({ revoked_at: a.knex.fn.now(), revoked_reason: 'operator: stolen laptop' });
    expect(await meOn(b, tokens.access)).toBe(401);
    await expect.poll(() => b.container.sessionCache.trusted(), { timeout: 10_000, message: 'B to be listening again' }).toBe(true);
    expect(await meOn(b, tokens.access)).toBe(401);
    // A live session is served, and cached, again.
    await signedInAndCachedOnB();
  });
});
