/**
 * A `fetch` that retries what may succeed later: a network failure, 429 and 503 (unless the error
 * body says `retryable: false`), waiting what `Retry-After` asks or an exponential backoff. A POST
 * the API keeps idempotent gets one Idempotency-Key for all its attempts, so a retry after a lost
 * answer is the same request to the service, never a second one.
 */
import { retryAfterMs } from './flows.js';
import type { RetryingFetchOptions } from './execute-types.ts';

const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/** The POSTs the API keeps under Idempotency-Key: every POST under /v1 but sign-in's and the stream ticket's. */
function takesIdempotencyKey(request: Request): boolean {
  if (request.method !== 'POST') return false;
  const path = new URL(request.url).pathname;
  return path.includes('/v1/') && !path.includes('/v1/auth/') && !path.endsWith('/v1/events/ticket');
}

const isAbort = (error: unknown) => (error as { name?: unknown } | undefined)?.name === 'AbortError';

function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) { reject(signal.reason); return; }
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
    const onAbort = () => { clearTimeout(timer); reject(signal!.reason); };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A new Idempotency-Key: a random UUID (the platform's crypto). */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/**
 * Wraps `fetch` so that a request failing for a reason that may pass (a network failure, 429, 503)
 * is sent again, at most `retries` more times, after `Retry-After` (seconds or a date) or a backoff
 * of `baseDelayMs` doubled per attempt, at most `maxDelayMs`. A 429/503 whose body says
 * `retryable: false` is returned as it is. A POST the API keeps idempotent and that carries no
 * Idempotency-Key gets one before its first attempt, the same for every retry. An aborted request
 * is never retried. Returns the last answer, or throws the last network error.
 */
export function retryingFetch(options: RetryingFetchOptions = {}): (request: Request) => Promise<Response> {
  const inner = options.fetch ?? ((request: Request) => fetch(request));
  const retries = options.retries ?? 5;
  const base = options.baseDelayMs ?? 500;
  const max = options.maxDelayMs ?? 30_000;
  return async (request) => {
    if (takesIdempotencyKey(request) && !request.headers.has('idempotency-key')) request.headers.set('idempotency-key', newIdempotencyKey());
    for (let attempt = 0; ; attempt += 1) {
      const backoff = Math.min(base * 2 ** attempt, max);
      let response: Response;
      try {
        // Each attempt sends a copy: a body can be read once.
        response = await inner(attempt < retries ? request.clone() : request);
      } catch (error) {
        if (isAbort(error) || request.signal?.aborted || attempt >= retries) throw error;
        options.onRetry?.({ attempt, delayMs: backoff, error });
        await sleep(backoff, request.signal);
        continue;
      }
      if (!RETRIED_STATUSES.has(response.status) || attempt >= retries) return response;
      const body = (await response.clone().json().catch(() => undefined)) as { retryable?: unknown } | undefined;
      if (body?.retryable === false) return response;
      const delay = Math.min(retryAfterMs(response.headers.get('retry-after')) ?? backoff, max);
      await response.body?.cancel().catch(() => undefined);
      options.onRetry?.({ attempt, delayMs: delay, status: response.status });
      await sleep(delay, request.signal);
    }
  };
}
