import cors from 'cors';
import type { RequestHandler } from 'express';
import type { Config } from '../../config/config.ts';

/**
 * Response headers a browser page may read: cache validators, the rate-limit budget and when to
 * retry (429, and 409 for a transaction not final yet), the methods a 405 allows, and whether an
 * answer is the replay of an earlier request with the same Idempotency-Key.
 */
export const EXPOSED_HEADERS = ['ETag', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'Allow', 'Idempotent-Replayed'] as const;

/**
 * CORS for browser dApps on other origins. Development allows any
 * origin (unset or `*`); production allows exactly `CORS_ORIGINS` (config refuses `*` there), and
 * none when unset. Tokens travel in `Authorization`, never in cookies: no credentials mode.
 * Preflights answer 204 with the allowed methods and headers, cached by the browser for 10 minutes.
 */
export function corsPolicy(config: Pick<Config, 'NODE_ENV' | 'CORS_ORIGINS'>): RequestHandler {
  const listed = config.CORS_ORIGINS ?? [];
  const anyOrigin = config.NODE_ENV === 'production' ? false : listed.length === 0 || listed.includes('*');
  const allowed = new Set(listed);
  return cors({
    // `true` reflects the request's Origin (so caches key on it through Vary: Origin).
    origin: anyOrigin ? true : (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'If-None-Match', 'Cache-Control', 'Last-Event-ID', 'Idempotency-Key'],
    exposedHeaders: [...EXPOSED_HEADERS],
    maxAge: 600,
  });
}
