import { createHash, createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { SignInRejected } from './errors.ts';
import { isUuid } from '../domain/index.ts';

/** Every token says what it is for; one kind is never accepted in place of the other. */
export type TokenType = 'access' | 'refresh';

export interface TokenSettings {
  /** The current key (JWT_SECRET): signs from `previous.switchAt` on (always, without a rotation). */
  secret: string;
  /**
   * JWT key rotation (JWT_PREVIOUS_SECRET, JWT_KEY_SWITCH_AT): the replaced key signs before
   * `switchAt` (Unix ms) and its tokens verify for one token lifetime after it.
   */
  previous?: { secret: string; switchAt: number };
  issuer: string;
  audience: string;
  accessTtlSeconds: number;
  refreshTtlSeconds: number;
}

/**
 * Who a token speaks for. `sub` is the wallet address that signed in (a SEP-10 token's `sub` is the
 * Stellar account, as SEP-10 requires; a SIWE token's the EVM address), so a wallet SDK reads its own
 * account back; the internal user id travels in a claim of its own, `uid`, for both kinds.
 */
export interface TokenSubject {
  userId: string;
  /** The address that signed in: G-/M-address or 0x address. */
  account: string;
}

/** What a verified token says: who, which session (refresh-token family), which token. */
export interface TokenClaims {
  userId: string;
  /** The `sub`: the address that signed in (a token of before `uid` existed: the user id). */
  account: string;
  sessionId: string;
  tokenId: string;
  /** The token's `exp`: a response that outlives the request (an event stream) ends then. */
  expiresAt: Date;
}

/** A refresh token as issued, with what the database keeps of it. */
export interface IssuedRefreshToken {
  token: string;
  id: string;
  hash: string;
  expiresAt: Date;
}

/** The only algorithm accepted: HS256. An explicit list, so `none` or an RS/HS confusion can never verify. */
const JWT_ALGORITHMS: jwt.Algorithm[] = ['HS256'];


/**
 * The `kid` header of tokens signed with `secret`: a fingerprint that names the key without
 * revealing it (the first 16 hex digits of SHA-256 over a fixed label and the key).
 */
export function jwtKeyId(secret: string): string {
  return createHash('sha256').update('relayer jwt kid\0').update(secret).digest('hex').slice(0, 16);
}

/** The key that signs at `now`: the previous one before the switch, the current one from it. */
function signingSecret(settings: TokenSettings, now: Date): string {
  return settings.previous && now.getTime() < settings.previous.switchAt ? settings.previous.secret : settings.secret;
}

/**
 * The key a token's `kid` names, if the token may be verified with it at `now`: the current key;
 * the previous key for a token issued before the switch (`iat`), until one lifetime of its kind after
 * the switch (so a rotation logs nobody out, and a leaked old key mints nothing new); a token
 * without `kid` (issued before kids existed) against the current key. Else undefined.
 */
function verifyingSecret(settings: TokenSettings, header: { kid?: unknown }, payload: { iat?: unknown }, expected: TokenType, now: Date): string | undefined {
  const { kid } = header;
  if (kid === undefined || kid === jwtKeyId(settings.secret)) return settings.secret;
  const previous = settings.previous;
  if (!previous || kid !== jwtKeyId(previous.secret)) return undefined;
  const lifetimeMs = (expected === 'access' ? settings.accessTtlSeconds : settings.refreshTtlSeconds) * 1000;
  if (typeof payload.iat !== 'number' || payload.iat * 1000 >= previous.switchAt) return undefined;
  return now.getTime() < previous.switchAt + lifetimeMs ? previous.secret : undefined;
}

/** SHA-256 of a refresh token, hex: what the database stores instead of the token. */
export function hashRefreshToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The options every verification uses (access and refresh tokens alike: `verifyToken` is the one path). */
function verifyOptions(settings: TokenSettings): jwt.VerifyOptions & { algorithms: jwt.Algorithm[] } {
  return { algorithms: JWT_ALGORITHMS, issuer: settings.issuer, audience: settings.audience };
}

function sign(settings: TokenSettings, typ: TokenType, who: TokenSubject, sessionId: string, tokenId: string, ttl: number, now: Date): string {
  const iat = Math.floor(now.getTime() / 1000);
  const secret = signingSecret(settings, now);
  return jwt.sign({ typ, uid: who.userId, sid: sessionId, iat, exp: iat + ttl }, secret, {
    algorithm: 'HS256',
    keyid: jwtKeyId(secret),
    subject: who.account,
    issuer: settings.issuer,
    audience: settings.audience,
    jwtid: tokenId,
  });
}

/**
 * Seconds a token may live: its configured lifetime, cut so it never outlives the session's
 * absolute end. Throws `SignInRejected` when the session has already ended.
 */
function lifetime(ttlSeconds: number, sessionEnd: Date | undefined, now: Date): number {
  if (!sessionEnd) return ttlSeconds;
  // Whole seconds, as jsonwebtoken counts `iat` and `exp`.
  const left = Math.floor(sessionEnd.getTime() / 1000) - Math.floor(now.getTime() / 1000);
  if (left <= 0) throw new SignInRejected('session reached its maximum age: sign in again');
  return Math.min(ttlSeconds, left);
}

/** A short-lived access token for the session, expiring no later than `sessionEnd`. */
export function issueAccessToken(settings: TokenSettings, who: TokenSubject, sessionId: string, sessionEnd?: Date, now = new Date()): string {
  return sign(settings, 'access', who, sessionId, randomUUID(), lifetime(settings.accessTtlSeconds, sessionEnd, now), now);
}

/**
 * A long-lived refresh token for the session, expiring no later than `sessionEnd` (so rotation
 * cannot extend a session); the caller stores `id` and `hash`, never `token`.
 */
export function issueRefreshToken(settings: TokenSettings, who: TokenSubject, sessionId: string, sessionEnd?: Date, now = new Date()): IssuedRefreshToken {
  const id = randomUUID();
  const ttl = lifetime(settings.refreshTtlSeconds, sessionEnd, now);
  const token = sign(settings, 'refresh', who, sessionId, id, ttl, now);
  // Whole seconds from the same `now` as the token's `iat`: the stored expiry is the token's `exp`.
  const expiresAt = new Date((Math.floor(now.getTime() / 1000) + ttl) * 1000);
  return { token, id, hash: hashRefreshToken(token), expiresAt };
}

/**
 * Checks the claims of an already signature-verified payload: the `typ` asked for, and ids of the
 * shape this service issues (so nothing odd reaches a uuid column). Throws `SignInRejected`.
 */
export function readClaims(payload: unknown, expected: TokenType): TokenClaims {
  const claims = (typeof payload === 'object' && payload !== null ? payload : {}) as Record<string, unknown>;
  if (claims.typ !== expected) throw new SignInRejected(expected === 'access' ? 'not an access token' : 'not a refresh token');
  const { sub, uid, sid, jti, exp } = claims;
  // Tokens issued before `uid` carried the user id as `sub`: they stay valid until they expire.
  const userId = uid === undefined ? sub : uid;
  if (!isUuid(userId) || typeof sub !== 'string' || !isUuid(sid) || !isUuid(jti) || typeof exp !== 'number') {
    throw new SignInRejected(`${expected} token is malformed`);
  }
  return { userId, account: sub, sessionId: sid, tokenId: jti, expiresAt: new Date(exp * 1000) };
}

/**
 * The secret as a KeyObject, made once per secret: given a string, jsonwebtoken first tries to read
 * it as a PEM public key (an exception thrown and caught on every request) before taking it as the
 * HMAC secret. At most the current and the previous key are held.
 */
const secretKeys = new Map<string, KeyObject>();
function secretKey(secret: string): KeyObject {
  let key = secretKeys.get(secret);
  if (!key) {
    if (secretKeys.size >= 4) secretKeys.clear();
    key = createSecretKey(Buffer.from(secret));
    secretKeys.set(secret, key);
  }
  return key;
}

/**
 * Verifies the key (`kid`: the current key, or the previous one within its window after a rotation),
 * signature (HS256 only), issuer, audience, expiry and type. Throws `SignInRejected` saying why; a
 * token of a key the service does not hold (an unknown `kid`, or the previous key's after its window)
 * is invalid. `now` is for tests.
 */
export function verifyToken(settings: TokenSettings, token: string, expected: TokenType, now = new Date()): TokenClaims {
  const decoded = jwt.decode(token, { complete: true });
  if (!decoded || typeof decoded.payload !== 'object') throw new SignInRejected(`${expected} token is invalid`);
  const secret = verifyingSecret(settings, decoded.header, decoded.payload, expected, now);
  if (secret === undefined) throw new SignInRejected(`${expected} token is signed by a key this service does not accept`);
  let payload: unknown;
  try {
    payload = jwt.verify(token, secretKey(secret), { ...verifyOptions(settings), clockTimestamp: Math.floor(now.getTime() / 1000) });
  } catch (error) {
    if (error instanceof jwt.TokenExpiredError) throw new SignInRejected(`${expected} token expired`, { code: 'TOKEN_EXPIRED' });
    throw new SignInRejected(`${expected} token is invalid`);
  }
  return readClaims(payload, expected);
}
