import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/config.ts';
import { resolveSecrets } from '../config/secrets.ts';
import { tokenSettings } from './service.ts';
import { issueAccessToken, issueRefreshToken, jwtKeyId, verifyToken, type TokenSettings } from './tokens.ts';

/**
 * JWT key rotation (docs/security.md "Rotating keys"): tokens carry a `kid`; after JWT_KEY_SWITCH_AT the
 * new key signs and the previous key's tokens stay valid for one token lifetime, so nobody is
 * logged out; a key the service does not hold is refused.
 */
const oldKey = randomBytes(32).toString('hex');
const newKey = randomBytes(32).toString('hex');
const SWITCH = Date.parse('2026-12-01T12:00:00Z');
const ACCESS_TTL = 900;
const REFRESH_TTL = 86_400;
const who = { userId: randomUUID(), account: '0x00000000000000000000000000000000000000aa' };
const session = randomUUID();
const at = (secondsFromSwitch: number) => new Date(SWITCH + secondsFromSwitch * 1000);

/** The settings as an api process builds them from its configuration and secrets. */
function settings(): TokenSettings {
  const config = loadConfig({
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'jwt-rotation-')),
    JWT_SECRET: newKey,
    JWT_PREVIOUS_SECRET: oldKey,
    JWT_KEY_SWITCH_AT: '2026-12-01T12:00:00Z',
    ACCESS_TOKEN_TTL_SECONDS: String(ACCESS_TTL),
    REFRESH_TOKEN_TTL_SECONDS: String(REFRESH_TTL),
  });
  return tokenSettings(config, resolveSecrets(config, 'api'));
}

const kidOf = (token: string) => jwt.decode(token, { complete: true })!.header.kid;

describe('JWT key rotation', () => {
  it('signs with the previous key before the switch and the current one from it, naming the key in kid', () => {
    const s = settings();
    expect(kidOf(issueAccessToken(s, who, session, undefined, at(-1)))).toBe(jwtKeyId(oldKey));
    expect(kidOf(issueAccessToken(s, who, session, undefined, at(0)))).toBe(jwtKeyId(newKey));
    expect(jwtKeyId(oldKey)).not.toBe(jwtKeyId(newKey));
    expect(jwtKeyId(newKey)).not.toContain(newKey.slice(0, 16));
  });

  it("accepts an access token of the previous key after the switch for one access-token lifetime, then refuses it", () => {
    const s = settings();
    const token = issueAccessToken(s, who, session, undefined, at(-60));
    expect(verifyToken(s, token, 'access', at(-1)).userId).toBe(who.userId);
    expect(verifyToken(s, token, 'access', at(ACCESS_TTL - 61)).sessionId).toBe(session);
    expect(() => verifyToken(s, token, 'access', at(ACCESS_TTL))).toThrow(/access token (expired|is signed by a key)/);
  });

  it("accepts a refresh token of the previous key for one refresh-token lifetime after the switch: the rotation logs nobody out", () => {
    const s = settings();
    const refresh = issueRefreshToken(s, who, session, undefined, at(-10));
    expect(verifyToken(s, refresh.token, 'refresh', at(REFRESH_TTL - 11)).tokenId).toBe(refresh.id);
    expect(() => verifyToken(s, refresh.token, 'refresh', at(REFRESH_TTL))).toThrow(/refresh token/);
  });

  it('refuses a token of the previous key issued after the switch, and one outliving the window (a leaked old key mints nothing)', () => {
    const s = settings();
    const claims = { typ: 'access', uid: who.userId, sid: session };
    const options = { algorithm: 'HS256' as const, keyid: jwtKeyId(oldKey), subject: who.account, issuer: s.issuer, audience: s.audience, jwtid: randomUUID() };
    const iat = Math.floor(SWITCH / 1000);
    const afterSwitch = jwt.sign({ ...claims, iat: iat + 1, exp: iat + 10 * ACCESS_TTL }, oldKey, options);
    expect(() => verifyToken(s, afterSwitch, 'access', at(2))).toThrow(/access token is signed by a key this service does not accept/);
    const longLived = jwt.sign({ ...claims, iat: iat - 1, exp: iat + 10 * ACCESS_TTL }, oldKey, options);
    expect(verifyToken(s, longLived, 'access', at(ACCESS_TTL - 1)).userId).toBe(who.userId);
    expect(() => verifyToken(s, longLived, 'access', at(ACCESS_TTL))).toThrow(/access token is signed by a key this service does not accept/);
  });

  it('refuses an unknown kid, and a token whose kid names one key but is signed with another', () => {
    const s = settings();
    const token = issueAccessToken(s, who, session, undefined, at(10));
    const strangerKey = randomBytes(32).toString('hex');
    const unknown = jwt.sign(jwt.decode(token) as object, strangerKey, { algorithm: 'HS256', keyid: jwtKeyId(strangerKey) });
    expect(() => verifyToken(s, unknown, 'access', at(11))).toThrow(/signed by a key this service does not accept/);
    const mislabelled = jwt.sign(jwt.decode(token) as object, strangerKey, { algorithm: 'HS256', keyid: jwtKeyId(newKey) });
    expect(() => verifyToken(s, mislabelled, 'access', at(11))).toThrow(/access token is invalid/);
  });

  it('without a rotation signs with JWT_SECRET alone and still accepts a token issued before kids existed', () => {
    const s: TokenSettings = { ...settings(), previous: undefined };
    const token = issueAccessToken(s, who, session, undefined, at(0));
    expect(kidOf(token)).toBe(jwtKeyId(newKey));
    const noKid = jwt.sign(jwt.decode(token) as object, newKey, { algorithm: 'HS256' });
    expect(verifyToken(s, noKid, 'access', at(1)).userId).toBe(who.userId);
    const oldNoKid = jwt.sign(jwt.decode(token) as object, oldKey, { algorithm: 'HS256' });
    expect(() => verifyToken(s, oldNoKid, 'access', at(1))).toThrow(/access token is invalid/);
  });
});
