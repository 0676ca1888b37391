import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthService } from '../../auth/service.ts';
import { loadConfig } from '../../config/config.ts';
import { resolveSecrets } from '../../config/secrets.ts';
import { startTestService, type TestService } from '../../test/support/service.ts';
import { start } from '../../entrypoints/service.ts';
import {
  call, evmProof, loginEvm, loginStellar, newEvmAccount, newStellarKeypair, stellarProof,
} from '../../test/support/wallets.ts';
import { createRequireAuth } from '../middleware/auth.ts';

const JWT_SECRET = randomBytes(32).toString('hex');
let service: TestService;

beforeAll(async () => { service = await startTestService({ JWT_SECRET }); });
afterAll(async () => { await service?.close(); });

const me = (token?: string, header?: string) =>
  header === undefined ? call(service, 'GET', '/v1/auth/me', undefined, token)
    : service.request('/v1/auth/me', { headers: { authorization: header } }).then(async (r) => ({ status: r.status, body: await r.json() }));
const refresh = (token: unknown) => call(service, 'POST', '/v1/auth/refresh', { refresh: token });
const link = (body: unknown, token?: string) => call(service, 'POST', '/v1/auth/link', body, token);

function expect401(response: { status: number; body: any }, message: RegExp) {
  expect(response.status).toBe(401);
  expect(response.body).toEqual({ statusCode: 401, message: expect.stringMatching(message), error: 'Unauthorized', code: expect.stringMatching(/^(UNAUTHENTICATED|SIGN_IN_REJECTED|TOKEN_EXPIRED)$/), retryable: false });
}

/** A token signed with the service's key, claims as given (defaults: a valid access token's). */
function craft(claims: Record<string, unknown>, options: jwt.SignOptions = {}, secret = JWT_SECRET): string {
  return jwt.sign({ typ: 'access', sid: crypto.randomUUID(), ...claims }, secret, {
    algorithm: 'HS256', subject: crypto.randomUUID(), issuer: 'cross-chain-relayer', audience: 'cross-chain-relayer-api',
    expiresIn: 600, jwtid: crypto.randomUUID(), ...options,
  });
}

describe('access and refresh tokens', () => {
  it('carry their type, issuer and audience; access lives 15 minutes and refresh 30 days by default', async () => {
    const { tokens } = (await loginEvm(service, newEvmAccount())).body;
    const access = jwt.decode(tokens.access, { complete: true })!;
    const refreshToken = jwt.decode(tokens.refresh, { complete: true })!;
    expect(access.header.alg).toBe('HS256');
    expect(access.payload).toMatchObject({ typ: 'access', iss: 'cross-chain-relayer', aud: 'cross-chain-relayer-api' });
    expect(refreshToken.payload).toMatchObject({ typ: 'refresh', iss: 'cross-chain-relayer', aud: 'cross-chain-relayer-api' });
    const lifetime = (payload: any) => payload.exp - payload.iat;
    expect(lifetime(access.payload)).toBe(900);
    expect(lifetime(refreshToken.payload)).toBe(30 * 24 * 3600);
  });

  it('GET /v1/auth/me answers the caller with its wallets', async () => {
    const account = newEvmAccount();
    const login = (await loginEvm(service, account)).body;
    const response = await me(login.tokens.access);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(login.user);
  });

  it('answers 401 in the spec body for a missing, malformed, expired or wrong-type token', async () => {
    const { tokens, user } = (await loginEvm(service, newEvmAccount())).body;
    const sid = (jwt.decode(tokens.access) as any).sid;
    expect401(await me(), /missing Authorization/);
    expect401(await me(undefined, `Basic ${Buffer.from('a:b').toString('base64')}`), /Bearer/);
    expect401(await me(undefined, 'Bearer'), /Bearer/);
    expect401(await me('not-a-jwt'), /access token is invalid/);
    expect401(await me(`${tokens.access.slice(0, -2)}xx`), /access token is invalid/);
    expect401(await me(craft({ sid }, { subject: user.id, expiresIn: -10 })), /access token expired/);
    expect401(await me(tokens.refresh), /not an access token/);
    expect401(await refresh(tokens.access), /not a refresh token/);
    // The right claims are needed, not just the right key.
    expect((await me(craft({ sid }, { subject: user.id }))).status).toBe(200);
    expect401(await me(craft({ sid }, { subject: user.id, issuer: 'someone-else' })), /invalid/);
    expect401(await me(craft({ sid }, { subject: user.id, audience: 'another-api' })), /invalid/);
    expect401(await me(craft({ sid }, { subject: user.id }, randomBytes(32).toString('hex'))), /invalid/);
    expect401(await me(craft({ sid }, { subject: user.id, algorithm: 'HS512' })), /invalid/);
    const unsigned = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${tokens.access.split('.')[1]}.`;
    expect401(await me(unsigned), /invalid/);
    expect401(await me(craft({ sid, typ: undefined }, { subject: user.id })), /not an access token/);
    expect401(await me(craft({ sid: 'x' }, { subject: user.id })), /malformed/);
    // A well-formed token for a session that does not exist.
    expect401(await me(craft({}, { subject: user.id })), /session/);
  });
});

describe('POST /v1/auth/refresh', () => {
  it('rotates: returns a new pair and spends the presented refresh token', async () => {
    const { tokens } = (await loginEvm(service, newEvmAccount())).body;
    const first = await refresh(tokens.refresh);
    expect(first.status).toBe(200);
    expect(Object.keys(first.body)).toEqual(['tokens']);
    expect(first.body.tokens.refresh).not.toBe(tokens.refresh);
    expect((await me(first.body.tokens.access)).status).toBe(200);
    const second = await refresh(first.body.tokens.refresh);
    expect(second.status).toBe(200);
    expect((await me(second.body.tokens.access)).status).toBe(200);
  });

  it('stores refresh tokens hashed only', async () => {
    const { tokens } = (await loginEvm(service, newEvmAccount())).body;
    const { jti } = jwt.decode(tokens.refresh) as { jti: string };
    const row = await service.knex('refresh_tokens').where({ id: jti }).first();
    expect(row.token_hash).toBe(createHash('sha256').update(tokens.refresh).digest('hex'));
    const dump = JSON.stringify(await service.knex('refresh_tokens').select());
    expect(dump).not.toContain(tokens.refresh);
    expect(dump).not.toContain(tokens.refresh.split('.')[2]);
  });

  it('revokes the whole family when a rotated refresh token is presented again', async () => {
    const account = newEvmAccount();
    const { tokens } = (await loginEvm(service, account)).body;
    const other = (await loginEvm(service, account)).body.tokens;
    const rotated = (await refresh(tokens.refresh)).body.tokens;
    expect401(await refresh(tokens.refresh), /already used.*revoked/);
    // Every token of that sign-in is dead now: the newest refresh token and the access tokens.
    expect401(await refresh(rotated.refresh), /revoked session/);
    expect401(await me(rotated.access), /revoked/);
    expect401(await me(tokens.access), /revoked/);
    // Another sign-in of the same wallet is another family.
    expect((await me(other.access)).status).toBe(200);
    expect((await refresh(other.refresh)).status).toBe(200);
  });

  it('answers 401 for a token it never issued and 422 for a missing one', async () => {
    const { user } = (await loginEvm(service, newEvmAccount())).body;
    expect401(await refresh('garbage'), /refresh token is invalid/);
    expect401(await refresh(craft({ typ: 'refresh' }, { subject: user.id })), /not known/);
    const missing = await call(service, 'POST', '/v1/auth/refresh', {});
    expect(missing.status).toBe(422);
    expect(missing.body.message).toEqual(['refresh is required']);
    expect((await refresh(42)).body.message).toEqual(['refresh must be the refresh token string']);
  });
});

describe('POST /v1/auth/logout', () => {
  const logout = (token?: string) => service.request('/v1/auth/logout', { method: 'POST', headers: token ? { authorization: `Bearer ${token}` } : {} });

  it("ends the caller's session at once: its access and refresh tokens answer 401, other sessions keep working", async () => {
    const account = newEvmAccount();
    const { tokens } = (await loginEvm(service, account)).body;
    const other = (await loginEvm(service, account)).body.tokens;
    const rotated = (await refresh(tokens.refresh)).body.tokens;
    const res = await logout(rotated.access);
    expect(res.status).toBe(204);
    expect401(await me(rotated.access), /revoked/);
    expect401(await me(tokens.access), /revoked/);
    expect401(await refresh(rotated.refresh), /revoked session/);
    expect((await me(other.access)).status).toBe(200);
    expect((await refresh(other.refresh)).status).toBe(200);
  });

  it('requires an access token, and a logged-out one cannot log out again', async () => {
    expect(await logout().then((r) => r.status)).toBe(401);
    const { tokens } = (await loginEvm(service, newEvmAccount())).body;
    expect(await logout(tokens.refresh).then((r) => r.status)).toBe(401);
    expect(await logout(tokens.access).then((r) => r.status)).toBe(204);
    expect(await logout(tokens.access).then((r) => r.status)).toBe(401);
  });
});

describe('absolute session lifetime', () => {
  it('ends a session at its maximum age however often it is refreshed', async () => {
    const { tokens } = (await loginEvm(service, newEvmAccount())).body;
    const { sid } = jwt.decode(tokens.access) as { sid: string };
    const session = await service.knex('sessions').where({ id: sid }).first();
    // SESSION_MAX_AGE_SECONDS defaults to 30 days from sign-in (database clock).
    expect(Math.abs(session.expires_at.getTime() - session.created_at.getTime() - 30 * 24 * 3600 * 1000)).toBeLessThan(2000);
    expect((jwt.decode(tokens.refresh) as { exp: number }).exp * 1000).toBe(session.expires_at.getTime());
    const rotated = (await refresh(tokens.refresh)).body.tokens;
    // Time passes: the session reaches its end.
    await service.knex('sessions').where({ id: sid }).update({ expires_at: service.knex.raw(`now() - interval '1 second'`) });
    expect401(await refresh(rotated.refresh), /maximum age/);
    expect401(await me(rotated.access), /maximum age/);
  });

  it('never issues a token that outlives the session, at sign-in or on refresh', async () => {
    const short = await startTestService({ SESSION_MAX_AGE_SECONDS: '90', REFRESH_TOKEN_TTL_SECONDS: '3600', ACCESS_TOKEN_TTL_SECONDS: '900' });
    try {
      const { tokens } = (await loginEvm(short, newEvmAccount())).body;
      const sid = (jwt.decode(tokens.access) as { sid: string }).sid;
      const end = Math.floor((await short.knex('sessions').where({ id: sid }).first()).expires_at.getTime() / 1000);
      const check = (pair: { access: string; refresh: string }) => {
        for (const token of [pair.access, pair.refresh]) {
          const { exp } = jwt.decode(token) as { exp: number };
          expect(exp).toBeLessThanOrEqual(end);
          expect(exp).toBeGreaterThan(end - 10);
        }
      };
      check(tokens);
      let pair = tokens;
      for (let i = 0; i < 3; i += 1) {
        const next = await call(short, 'POST', '/v1/auth/refresh', { refresh: pair.refresh });
        expect(next.status).toBe(200);
        pair = next.body.tokens;
        check(pair);
      }
      const stored = await short.knex('refresh_tokens').where({ session_id: sid }).max('expires_at as latest').first();
      expect(Math.floor(stored!.latest.getTime() / 1000)).toBeLessThanOrEqual(end);
    } finally {
      await short.close();
    }
  });
});

describe('purging expired sign-in records', () => {
  it('deletes expired challenges, ended sessions and expired refresh tokens, and keeps what can still be used', async () => {
    const knex = service.knex;
    const past = knex.raw(`now() - interval '1 second'`);
    const account = newEvmAccount();
    // A challenge that expired, and one still open.
    const stale = (await call(service, 'POST', '/v1/auth/challenge', { address: account.address, chainKind: 'EVM' })).body.nonce;
    await knex('auth_challenges').where({ nonce: stale }).update({ expires_at: past });
    const open = (await call(service, 'POST', '/v1/auth/challenge', { address: account.address, chainKind: 'EVM' })).body.nonce;
    // A session past its end, a logged-out one, a live one with a rotated-out token that expired.
    const sessionOf = (pair: { access: string }) => (jwt.decode(pair.access) as { sid: string }).sid;
    const ended = (await loginEvm(service, account)).body.tokens;
    await knex('sessions').where({ id: sessionOf(ended) }).update({ expires_at: past });
    const loggedOut = (await loginEvm(service, account)).body.tokens;
    await service.request('/v1/auth/logout', { method: 'POST', headers: { authorization: `Bearer ${loggedOut.access}` } });
    await knex('refresh_tokens').where({ session_id: sessionOf(loggedOut) }).update({ expires_at: past });
    const revokedRecently = (await loginEvm(service, account)).body.tokens;
    await service.request('/v1/auth/logout', { method: 'POST', headers: { authorization: `Bearer ${revokedRecently.access}` } });
    const live = (await loginEvm(service, account)).body.tokens;
    const { jti: oldJti } = jwt.decode(live.refresh) as { jti: string };
    const current = (await refresh(live.refresh)).body.tokens;
    await knex('refresh_tokens').where({ id: oldJti }).update({ expires_at: past });

    const removed = await service.container.authPurger.runOnce();
    expect(removed.challenges).toBeGreaterThanOrEqual(1);
    expect(removed.sessions).toBeGreaterThanOrEqual(2);
    expect(removed.refreshTokens).toBeGreaterThanOrEqual(2);
    const nonces = (await knex('auth_challenges').whereIn('nonce', [stale, open]).pluck('nonce')) as string[];
    expect(nonces).toEqual([open]);
    const sessions = (await knex('sessions').whereIn('id', [ended, loggedOut, revokedRecently, live].map(sessionOf)).pluck('id')) as string[];
    // A revoked session stays while one of its refresh tokens could still be presented (and answered "revoked").
    expect(sessions.sort()).toEqual([sessionOf(revokedRecently), sessionOf(live)].sort());
    expect(await knex('refresh_tokens').where({ id: oldJti }).first()).toBeUndefined();
    expect((await me(current.access)).status).toBe(200);
    expect((await refresh(current.refresh)).status).toBe(200);
  });
});

describe('POST /v1/auth/link', () => {
  it("records a wallet of the other chain kind on the caller's user; the existing tokens stand for both", async () => {
    const account = newEvmAccount();
    const stellar = newStellarKeypair();
    const { tokens, user } = (await loginEvm(service, account)).body;
    const linked = await link(await stellarProof(service, stellar), tokens.access);
    expect(linked.status).toBe(200);
    expect(linked.body.id).toBe(user.id);
    expect(linked.body.wallets.map((w: any) => [w.chainKind, w.address])).toEqual([['EVM', account.address], ['STELLAR', stellar.publicKey()]]);
    expect((await me(tokens.access)).body).toEqual(linked.body);
    // Signing in with the linked wallet reaches the same user.
    expect((await loginStellar(service, stellar)).body.user.id).toBe(user.id);
  });

  it('puts the caller and its wallets by chain kind on the request for later routes', async () => {
    const account = newEvmAccount();
    const stellar = newStellarKeypair();
    const { tokens, user } = (await loginStellar(service, stellar)).body;
    await link(await evmProof(service, account), tokens.access);
    const auth = createAuthService({ config: service.config, secrets: resolveSecrets(service.config), knex: service.knex });
    const app = express().get('/whoami', createRequireAuth(auth), (req, res) => { res.json(req.user); });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/whoami`, { headers: { authorization: `Bearer ${tokens.access}` } });
      expect(await response.json()).toEqual({
        userId: user.id, sessionId: (jwt.decode(tokens.access) as any).sid, wallets: { EVM: account.address, STELLAR: stellar.publicKey() },
      });
    } finally {
      server.close();
    }
  });

  it('answers 409 when the chain kind is already linked or the address belongs to another user', async () => {
    const { tokens } = (await loginEvm(service, newEvmAccount())).body;
    const sameKind = await link(await evmProof(service, newEvmAccount()), tokens.access);
    expect(sameKind.status).toBe(409);
    expect(sameKind.body).toEqual({ statusCode: 409, message: 'a EVM wallet is already linked to this user', error: 'Conflict', code: 'WALLET_CONFLICT', retryable: false });
    const taken = newStellarKeypair();
    await loginStellar(service, taken);
    const owned = await link(await stellarProof(service, taken), tokens.access);
    expect(owned.status).toBe(409);
    expect(owned.body.message).toBe(`${taken.publicKey()} already belongs to another user`);
  });

  it('requires an access token and a valid proof', async () => {
    const proof = await stellarProof(service, newStellarKeypair());
    expect401(await link(proof), /missing Authorization/);
    const { tokens } = (await loginEvm(service, newEvmAccount())).body;
    expect401(await link(proof, tokens.refresh), /not an access token/);
    const unsigned = (await call(service, 'POST', '/v1/auth/challenge', { address: newStellarKeypair().publicKey(), chainKind: 'STELLAR' })).body.transaction;
    expect401(await link({ chainKind: 'STELLAR', transaction: unsigned }, tokens.access), /not signed by the client/);
    const invalid = await link({ chainKind: 'STELLAR' }, tokens.access);
    expect(invalid.status).toBe(422);
    expect(invalid.body.message).toEqual(['transaction is required']);
  });
});

describe('configuration', () => {
  it('uses the configured lifetimes and answers 429 in the spec body past the auth rate limit', async () => {
    const limited = await startTestService({ AUTH_RATE_LIMIT_MAX: '3', ACCESS_TOKEN_TTL_SECONDS: '60', REFRESH_TOKEN_TTL_SECONDS: '120', CHALLENGE_TTL_SECONDS: '30' });
    try {
      const account = newEvmAccount();
      const before = Date.now();
      const challenge = await call(limited, 'POST', '/v1/auth/challenge', { address: account.address, chainKind: 'EVM' });
      expect(Date.parse(challenge.body.expiresAt) - before).toBeGreaterThan(29_000);
      expect(Date.parse(challenge.body.expiresAt) - before).toBeLessThanOrEqual(31_000);
      const { message } = challenge.body;
      const login = await call(limited, 'POST', '/v1/auth/login', { chainKind: 'EVM', message, signature: account.sign(message).signature });
      const access = jwt.decode(login.body.tokens.access) as any;
      const refreshToken = jwt.decode(login.body.tokens.refresh) as any;
      expect(access.exp - access.iat).toBe(60);
      expect(refreshToken.exp - refreshToken.iat).toBe(120);
      expect((await call(limited, 'GET', '/v1/auth/me', undefined, login.body.tokens.access)).status).toBe(200);
      const refused = await call(limited, 'GET', '/v1/auth/me', undefined, login.body.tokens.access);
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ statusCode: 429, message: expect.stringMatching(/too many auth requests/), error: 'Too Many Requests', code: 'RATE_LIMITED', retryable: true });
      // Only /v1/auth has the stricter budget.
      expect((await limited.request('/v1/chains')).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('refuses to start in production when the signing secrets are missing or weak', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'relayer-auth-prod-'));
    const base = {
      // The embedded run also sends the keeper's transactions; this test is about the signing secrets only.
      NODE_ENV: 'production', RELAYER_SIGNER_ALLOW_ENV: 'true', KEEPER_ENABLED: 'false', PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'silent', DATABASE_URL: 'postgres://127.0.0.1:1/never',
      SIWE_DOMAIN: 'app.example.com', SIWE_URI: 'https://app.example.com', SEP10_HOME_DOMAIN: 'example.com', SEP10_WEB_AUTH_DOMAIN: 'auth.example.com',
    };
    await expect(start(loadConfig(base))).rejects.toThrow(/JWT_SECRET: required in production[\s\S]*SEP10_SIGNING_SECRET: required in production/);
    await expect(start(loadConfig({ ...base, JWT_SECRET: 'short', SEP10_SIGNING_SECRET: 'not-a-seed' })))
      .rejects.toThrow(/JWT_SECRET: must be at least 32 bytes[\s\S]*SEP10_SIGNING_SECRET: must be a Stellar secret seed/);
  });
});
