import { rateLimit, type RateLimitRequestHandler, type Store } from 'express-rate-limit';
import type { Knex } from 'knex';
import type { Config } from '../../config/config.ts';
import { fixedWindowLimit, tooManyRequests } from './fixed-window-limit.ts';
import { PostgresRateLimitStore } from './rate-limit-store.ts';

function limiter(windowMs: number, limit: number, what: string, store: Store): RateLimitRequestHandler {
  return rateLimit({
    windowMs,
    limit,
    store,
    // IETF draft-8 `RateLimit` / `RateLimit-Policy` headers; no legacy X-RateLimit-*.
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: what,
    handler: (_req, res) => {
      res.status(429).json(tooManyRequests(what));
    },
  });
}

/**
 * Every endpoint shares the general budget; /v1/auth/* additionally has its own, stricter one
 * (sign-in is the brute-force target).
 * - The sign-in budget's counters live in PostgreSQL (`rate_limits`), so it holds across every API
 *   replica over the database: AUTH_RATE_LIMIT_MAX per client per window in total.
 * - The general budget's counters live in this process, in a synchronous fixed-window counter
 *   (`fixedWindowLimit`: every request pays it, so it must be cheap): behind a load balancer with N
 *   replicas a client gets up to N times RATE_LIMIT_MAX. The global limit on reads is the gateway's job.
 */
export function createRateLimiters(config: Config, knex: Knex) {
  return {
    general: fixedWindowLimit({ windowMs: config.RATE_LIMIT_WINDOW_MS, limit: config.RATE_LIMIT_MAX, name: 'general' }),
    auth: limiter(config.RATE_LIMIT_WINDOW_MS, config.AUTH_RATE_LIMIT_MAX, 'auth', new PostgresRateLimitStore(knex, 'auth')),
  };
}
