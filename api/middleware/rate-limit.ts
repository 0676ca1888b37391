import { rateLimit, type RateLimitRequestHandler } from 'express-rate-limit';
import type { Config } from '../../config.ts';
import { errorBody } from '../errors.ts';

function limiter(windowMs: number, limit: number, what: string): RateLimitRequestHandler {
  return rateLimit({
    windowMs,
    limit,
    // IETF draft-8 `RateLimit` / `RateLimit-Policy` headers; no legacy X-RateLimit-*.
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: what,
    handler: (_req, res) => {
      res.status(429).json(errorBody(429, `too many ${what} requests; retry later with exponential backoff`));
    },
  });
}

/**
 * Every endpoint shares the general budget; /v1/auth/* additionally has its own, stricter one
 * (sign-in is the brute-force target). Counters live in this process: behind a load balancer
 * with N replicas the effective budget is N times the setting.
 */
export function createRateLimiters(config: Config) {
  return {
    general: limiter(config.RATE_LIMIT_WINDOW_MS, config.RATE_LIMIT_MAX, 'general'),
    auth: limiter(config.RATE_LIMIT_WINDOW_MS, config.AUTH_RATE_LIMIT_MAX, 'auth'),
  };
}
