import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import {
  claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey, type StoredResponse,
} from '../../db/repositories/idempotency-keys.ts';
import { AppError, unprocessable } from '../errors.ts';
import { principalOf } from './auth.ts';

/**
 * `Idempotency-Key` (IETF draft-ietf-httpapi-idempotency-key-header) on the POSTs that create,
 * reserve or sign: every POST under /v1 but sign-in's and the stream ticket's (`isIdempotentOperation`). The first request
 * with a key claims (user, key) in PostgreSQL before it runs; its answer is stored and replayed to
 * the same user sending the same key with the same request for `ttlSeconds` (24 h). Rules:
 * - the key: 1..255 characters of letters, digits and `-._~+/=:`, bare or as a structured-field
 *   string in double quotes (the draft's form); anything else is 422 naming the header;
 * - the same key with another method, path or body (canonical JSON, keys sorted) is 422;
 * - a duplicate that arrives while the first still runs waits up to `waitSeconds` for its answer,
 *   then gets 409 with `Retry-After: 1` (nothing ran twice);
 * - a first request that stopped before its answer was stored (the process died between the use
 *   case's commit and the store, or the store's write failed) leaves its key unfinished: after
 *   `staleAfterSeconds` a confirm (`rerunsSafely`) runs again (its txHash is a duplicate by then);
 *   any other operation answers 409 IDEMPOTENCY_KEY_IN_USE for the key's 24 h, because its effect
 *   may be committed and a second run would make a second one;
 * - only successful answers (2xx) are stored: they are the ones that did something. A refusal
 *   (4xx) changed nothing (the API's rule for bad input and forbidden states) and a 5xx may have
 *   been an outage, so a retry with the same key runs again and may succeed once the state allows
 *   (an unlock asked before its turn, a body corrected after a 422);
 * - every operation that takes the header needs a Bearer token (401 first); the key is scoped to
 *   the user, so two users' equal keys never meet;
 * - a user holds at most `maxKeysPerUser` live keys (MAX_IDEMPOTENCY_KEYS_PER_USER, 1,000 per 24 h):
 *   a new key past it is 429 IDEMPOTENCY_KEYS_EXHAUSTED with Retry-After (when the oldest expires),
 *   counted in `relayer_idempotency_keys_refused_total`; a key already held still replays.
 */

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** The key as the document gives it (the bare form; a quoted one is accepted too). */
export const IDEMPOTENCY_KEY_PATTERN = '^[A-Za-z0-9._~+/=:-]{1,255}$';
const KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);
/** Set on a replayed answer, as Stripe and others do. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * True for the operations that honour `Idempotency-Key`: every POST under /v1 but sign-in's and the
 * stream ticket's (a credential: a stored answer would keep the ticket in plain text, where the
 * service keeps only its hash; a lost one costs nothing, the client asks another).
 */
export function isIdempotentOperation(method: string, path: string): boolean {
  return method.toLowerCase() === 'post' && path.startsWith('/v1/') && !path.startsWith('/v1/auth/') && path !== '/v1/events/ticket';
}

/**
 * True for the operations a second run of cannot make a second effect, so an abandoned key (its
 * first request stopped before its answer was stored) may run them again: the confirms (the same
 * txHash is recognised as a duplicate and answered again). Every other operation creates, reserves
 * or signs something new on each run (an ad, a trade's reservation, a signed request, a webhook).
 */
export function rerunsSafely(path: string): boolean {
  return path.endsWith('/confirm');
}

/** The key a header value carries (`abc` or `"abc"`), or undefined when it is not one. */
export function parseIdempotencyKey(value: string): string | undefined {
  const bare = value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  return KEY.test(bare) ? bare : undefined;
}

/** JSON with every object's keys sorted: equal bodies, however spelt, have one text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What a key is bound to: sha256 of the method, the path and the canonical body. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method.toUpperCase()} ${path}\n${canonicalJson(body ?? null)}`).digest('hex');
}

export interface IdempotencyOptions {
  knex: Knex;
  logger: Logger;
  /** How long an answer is replayed: 24 h. */
  ttlSeconds?: number;
  /** How long a duplicate waits for the first request's answer before 409. */
  waitSeconds: number;
  /** An unfinished key older than this is abandoned (the process running it died or its answer was lost): see `rerunsSafely`. */
  staleAfterSeconds?: number;
  /** How many live keys one user may hold (MAX_IDEMPOTENCY_KEYS_PER_USER). */
  maxKeysPerUser: number;
  /** Where `relayer_idempotency_keys_refused_total` is registered. */
  metrics: Registry;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Answers worth replaying: successes, the only answers that changed something. Others leave the key free for the retry. */
const isSuccess = (res: Response) => res.statusCode >= 200 && res.statusCode < 300;

/**
 * The middleware, mounted after `requireAuth` on every idempotent operation. Without the header
 * the request runs as before.
 */
export function idempotency(options: IdempotencyOptions): RequestHandler {
  const { knex, logger, ttlSeconds = 86_400, waitSeconds, staleAfterSeconds = 120, maxKeysPerUser } = options;
  const refused = new Counter({
    name: 'relayer_idempotency_keys_refused_total',
    help: 'Requests refused because their user already holds MAX_IDEMPOTENCY_KEYS_PER_USER live Idempotency-Keys',
    registers: [options.metrics],
  });

  /** Stores the answer (or frees the key) before the client sees it, so a retry finds it. */
  function capture(req: Request, res: Response, userId: string, key: string, claim: string): void {
    const send = res.send.bind(res);
    res.send = ((body?: unknown) => {
      res.send = send;
      const text = typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('utf8') : body === undefined ? '' : JSON.stringify(body);
      const contentType = res.getHeader('Content-Type');
      const stored: StoredResponse = {
        statusCode: res.statusCode,
        body: text,
        headers: contentType === undefined ? {} : { 'content-type': String(contentType) },
      };
      const persisted = isSuccess(res) ? completeIdempotencyKey(knex, userId, key, claim, stored) : releaseIdempotencyKey(knex, userId, key, claim);
      persisted.then(
        () => send(body),
        (error: unknown) => {
          // The answer still goes out; the key stays claimed until it is stale, then the same request may run again.
          logger.warn({ err: error, reqId: req.id }, 'could not store the answer of an Idempotency-Key');
          send(body);
        },
      );
      return res;
    }) as Response['send'];
  }

  return async (req, res, next) => {
    const sent = req.headers['idempotency-key'];
    if (sent === undefined) return next();
    // Node joins a repeated header with ", ", which no key contains: two keys are no key.
    const header = Array.isArray(sent) ? sent.join(', ') : sent;
    const key = parseIdempotencyKey(header);
    if (key === undefined) {
      throw unprocessable([`${IDEMPOTENCY_HEADER} must be 1 to 255 characters of letters, digits and -._~+/=: ` +
        `(optionally in double quotes), received '${header.slice(0, 64)}'`]);
    }
    const userId = principalOf(req).userId;
    const path = req.originalUrl.split('?')[0]!;
    const fingerprint = requestFingerprint(req.method, path, req.body);
    const deadline = Date.now() + waitSeconds * 1000;
    for (let pause = 50; ; pause = Math.min(pause * 2, 500)) {
      const found = await claimIdempotencyKey(knex, {
        userId, key, fingerprint, ttlSeconds, staleAfterSeconds, takeOverStale: rerunsSafely(path), maxKeysPerUser,
      });
      if (found.kind === 'exhausted') {
        refused.inc();
        res.setHeader('Retry-After', String(found.retryAfterSeconds));
        throw new AppError(
          429,
          `${IDEMPOTENCY_HEADER}: you hold ${maxKeysPerUser} keys of the last 24 hours, the most one user may; reuse ` +
            `a key only to retry its own request, send this request without the header, or retry after Retry-After`,
          { code: 'IDEMPOTENCY_KEYS_EXHAUSTED' },
        );
      }
      if (found.kind === 'claimed') {
        capture(req, res, userId, key, found.claim);
        return next();
      }
      if (found.kind === 'mismatch') {
        throw unprocessable(
          [`${IDEMPOTENCY_HEADER} '${key}' was used for another request (another method, path or body) in the last ` +
            `24 hours: send a new key for a new request`],
          { code: 'IDEMPOTENCY_KEY_REUSED' },
        );
      }
      if (found.kind === 'completed') {
        res.status(found.response.statusCode);
        for (const [name, value] of Object.entries(found.response.headers)) res.setHeader(name, value);
        res.setHeader(REPLAYED_HEADER, 'true');
        res.send(found.response.body);
        return;
      }
      if (found.kind === 'abandoned') {
        // Its effect may be committed with only the answer lost: running it again could make a second one.
        throw new AppError(
          409,
          `${IDEMPOTENCY_HEADER} '${key}': the first request with this key stopped before its answer was stored, ` +
            `and it may have taken effect; it is not run again under this key: look for its effect (GET ` +
            `/v1/trades/all, GET /v1/ads?status=PENDING) and send a new key only for a new request`,
          { code: 'IDEMPOTENCY_KEY_IN_USE' },
        );
      }
      if (Date.now() >= deadline) {
        res.setHeader('Retry-After', '1');
        throw new AppError(
          409,
          `${IDEMPOTENCY_HEADER} '${key}': the first request with this key is still running; retry to get its answer`,
          { code: 'IDEMPOTENCY_KEY_IN_USE' },
        );
      }
      await sleep(Math.min(pause, Math.max(0, deadline - Date.now())));
    }
  };
}
