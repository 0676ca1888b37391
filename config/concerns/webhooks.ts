import { z } from 'zod';
import { defineConcern, intFromEnv } from './define.ts';

/** Webhook endpoints (registered through the API) and their deliveries (the worker, or the embedded process). */
export const webhookSettings = defineConcern({
  name: 'webhooks',
  schema: z.object({
    /** One webhook delivery attempt's whole time (connect, send, answer); then it counts as failed. */
    WEBHOOK_TIMEOUT_SECONDS: intFromEnv(1, 60).default(10),
    /** Retry backoff after the n-th failure in a row: min(max, base * 2^(n-1)) seconds, times a random 0.5..1. */
    WEBHOOK_RETRY_BASE_SECONDS: intFromEnv(1, 3600).default(5),
    WEBHOOK_RETRY_MAX_SECONDS: intFromEnv(1, 86_400).default(3600),
    /** An endpoint failing this many times in a row, for at least WEBHOOK_DISABLE_AFTER_SECONDS, is disabled. */
    WEBHOOK_DISABLE_AFTER_FAILURES: intFromEnv(1, 100_000).default(20),
    WEBHOOK_DISABLE_AFTER_SECONDS: intFromEnv(0, 2_592_000).default(432_000),
    /** Webhook endpoints one user may register. */
    WEBHOOK_MAX_ENDPOINTS_PER_USER: intFromEnv(1, 1000).default(10),
    /** How often endpoints left behind (a lost notice, a crashed worker) are looked for. */
    WEBHOOK_SWEEP_SECONDS: intFromEnv(1, 3600).default(10),
  }),
});
