import { z } from 'zod';
import { booleanFromEnv, defineConcern, intFromEnv } from './define.ts';

/**
 * `value` as the browser's Origin header spells it (lower-case host, no default port, no slash),
 * or undefined when it is not an http(s) origin with nothing after it.
 */
function normalOrigin(value: string): string | undefined {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (url.username || url.password || url.search || url.hash || url.pathname !== '/') return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

const schema = z.object({
  /** HTTP port of the API; 0 picks a free one (tests). */
  PORT: intFromEnv(0, 65535).default(3000),
  /**
   * `true` serves GET /metrics on the API port itself, for a deployment whose API port is not public.
   * Off by default: the metrics name routes, queues and error rates nobody outside should read.
   */
  METRICS_ON_API_PORT: booleanFromEnv('false'),
  /** Largest accepted JSON body. */
  BODY_LIMIT: z.string().regex(/^\d+(b|kb|mb)$/, 'must look like 100kb').default('100kb'),
  /** Requests per window per client on every endpoint. */
  RATE_LIMIT_WINDOW_MS: intFromEnv(1000, 86_400_000).default(60_000),
  RATE_LIMIT_MAX: intFromEnv(1, 1_000_000).default(600),
  /** Stricter budget for /v1/auth/* (sign-in is the brute-force target). */
  AUTH_RATE_LIMIT_MAX: intFromEnv(1, 1_000_000).default(30),
  /**
   * Origins (scheme://host[:port], comma-separated) whose browser pages may call the API (CORS).
   * Development: unset or `*` allows any origin. Production: only the listed origins; `*` is refused,
   * unset allows none (same-origin pages and non-browser clients only).
   */
  CORS_ORIGINS: z
    .string()
    .transform((value, ctx) => {
      const origins = value.split(',').map((item) => item.trim()).filter((item) => item !== '');
      return origins.map((origin) => {
        if (origin === '*') return origin;
        const normal = normalOrigin(origin);
        if (normal === undefined) ctx.addIssue({ code: 'custom', message: `'${origin}' is not an origin (http(s)://host[:port], no path)` });
        return normal ?? origin;
      });
    })
    .optional(),
  /** Number of reverse proxies in front of the API, so the rate limiter sees the client's address. */
  TRUST_PROXY_HOPS: intFromEnv(0, 10).default(0),
  /** How long a request repeating an Idempotency-Key waits for the first one's answer before 409 (0: at once). */
  IDEMPOTENCY_WAIT_SECONDS: intFromEnv(0, 60).default(10),
  /** Idempotency-Keys one user may hold at once (each kept 24 h); a new one past it is 429 IDEMPOTENCY_KEYS_EXHAUSTED. */
  MAX_IDEMPOTENCY_KEYS_PER_USER: intFromEnv(1, 1_000_000).default(1000),
  /** A comment line on every open event stream this often, so proxies keep it open. */
  SSE_HEARTBEAT_SECONDS: intFromEnv(1, 300).default(15),
  /** Event streams one client (IP, IPv6 /56) may hold open on one API process; one more is 429. */
  SSE_MAX_STREAMS_PER_CLIENT: intFromEnv(1, 100_000).default(20),
  /** Event streams one API process holds open in all (each is a socket, a heartbeat timer, a hub subscription); one more is 503. */
  SSE_MAX_STREAMS: intFromEnv(1, 1_000_000).default(10_000),
  /** How often an API process asks PostgreSQL whether the sessions behind its open /v1/events streams are still live; a revoked one's streams end then. */
  SSE_SESSION_CHECK_SECONDS: intFromEnv(1, 300).default(5),
  /** Lifetime of a stream ticket (POST /v1/events/ticket): single use, for opening GET /v1/events?ticket= from a browser's EventSource. */
  SSE_TICKET_TTL_SECONDS: intFromEnv(5, 600).default(60),
});

/** The HTTP API: its port, request limits, CORS, Idempotency-Key and the event streams. */
export const httpApiSettings = defineConcern<typeof schema.shape, { METRICS_PORT?: number | undefined }>({
  name: 'http api',
  schema,
  // METRICS_PORT is the serving concern's: read here only to refuse both ways of serving /metrics at once.
  check(config, ctx) {
    if (config.METRICS_ON_API_PORT && config.METRICS_PORT !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['METRICS_ON_API_PORT'], message: 'must not be true when METRICS_PORT is set: /metrics is served on one port' });
    }
    // Any origin in production would let every web page spend a signed-in user's token it obtained.
    if (config.NODE_ENV === 'production' && config.CORS_ORIGINS?.includes('*')) {
      ctx.addIssue({ code: 'custom', path: ['CORS_ORIGINS'], message: 'must list the allowed origins in production, not *' });
    }
  },
});
