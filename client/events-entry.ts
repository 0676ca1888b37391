/**
 * The source of client/events.js (`@cross-chain-relayer/client/events`, re-exported by the main
 * entry): follow a trade's or the caller's event stream in Node and in browsers, resuming after a
 * drop with the last event id, fetching a new stream ticket (EventSource) or a fresh access token
 * (fetch) on every reconnect, and stopping at a trade's terminal status. No dependency: `fetch`,
 * `TextDecoder` and, in browsers, `EventSource`. Bundled by `npm run client:generate`.
 */
import type { components } from './schema.d.ts';

/** A pushed event (the JSON in an SSE frame's `data`, the same body webhooks deliver). */
export type PushedEvent = components['schemas']['PushedEvent'];

/** One event of a stream: its position (send it back to resume), its type and its payload. */
export interface StreamEvent {
  id: number;
  event: string;
  data: PushedEvent;
}

/** Why a follow ended. */
export interface FollowEnd {
  /** The last event id delivered: pass it as `lastEventId` to pick up later. */
  lastEventId: number;
  /** `terminal`: the trade reached SETTLED or EXPIRED; `ended`: the trade's stream had nothing more (204); `aborted`: `signal` aborted. */
  reason: 'terminal' | 'ended' | 'aborted';
}

export interface FollowOptions {
  /** The API's base URL, e.g. `https://relayer.example.org`. */
  baseUrl: string;
  /** Called for each event, in order, never twice; awaited before the next. A throw stops the follow (its promise rejects). */
  onEvent: (event: StreamEvent) => void | Promise<void>;
  /** Resume after this event id (one you saw before); default: from the stream's start. */
  lastEventId?: number | string;
  /** Aborting stops the follow; its promise resolves with reason `aborted`. */
  signal?: AbortSignal;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** First wait before a reconnect, doubled after each failed one up to 30 s (default 1000 ms). */
  retryMs?: number;
  /** Reconnect when nothing (not even a heartbeat) arrived for this long on a fetch-read stream (default 45 s: three of the service's 15 s heartbeats). */
  idleTimeoutMs?: number;
  /** Told before each reconnect, with the id it resumes after (for logs and tests). */
  onReconnect?: (info: { lastEventId: number; attempt: number }) => void;
}

export interface FollowEventsOptions extends FollowOptions {
  /** The caller's current access token, asked before each (re)connect: return a refreshed one once the old expires. */
  getAccessToken: () => string | Promise<string>;
  /**
   * `eventsource` (the default where `EventSource` exists, i.e. browsers): a single-use ticket from
   * POST /v1/events/ticket opens `new EventSource(...?ticket=)`, a new ticket on every reconnect;
   * `fetch` (the default elsewhere): `Authorization: Bearer` and `Last-Event-ID` headers, read as a stream.
   */
  transport?: 'eventsource' | 'fetch';
}

/** The API refused the stream for good (a bad token, an unknown trade, a bad Last-Event-ID): status and the error body. */
export class StreamError extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown) {
    const message = (body as { message?: unknown } | undefined)?.message;
    super(`event stream refused: ${status} ${Array.isArray(message) ? message.join('; ') : String(message ?? '')}`);
    this.name = 'StreamError';
    this.status = status;
    this.body = body;
  }
}

/** Carries an error that must stop the follow (not a network failure). */
class Fatal {
  constructor(readonly reason: unknown) {}
}

const TERMINAL_STATUSES: readonly string[] = ['SETTLED', 'EXPIRED'];
const EVENT_TYPES: readonly string[] = ['trade.created', 'trade.status_changed', 'trade.proof_ready', 'trade.unlock_due', 'trade.claimed', 'trade.expired', 'ad.confirmed'];
const MAX_BACKOFF_MS = 30_000;

/** True for a trade's last event: its `trade.status_changed` into SETTLED or EXPIRED (every claim comes before it). */
export function isTerminalEvent(event: StreamEvent): boolean {
  const data = event.data as { type: string; data: { status?: string } };
  return event.event === 'trade.status_changed' && TERMINAL_STATUSES.includes(data.data.status ?? '');
}

/**
 * Follows one trade (`GET /v1/trades/{id}/events`, public) until its terminal status: every event
 * in order, once, across dropped connections (it reconnects with `Last-Event-ID`). Read with fetch
 * everywhere (browsers included), which sees the statuses EventSource hides (404 unknown trade).
 * Resolves with the last id; rejects with `StreamError` when the API refuses for good.
 */
export function followTrade(tradeId: string, options: FollowOptions): Promise<FollowEnd> {
  const url = `${trimmed(options.baseUrl)}/v1/trades/${encodeURIComponent(tradeId)}/events`;
  return viaFetch(url, options, undefined, isTerminalEvent);
}

/**
 * Follows the caller's events (`GET /v1/events`: its trades as Maker or Bridger, and its ads) until
 * `signal` aborts. Reconnects after a drop, after the service ends the stream (the access token
 * that opened it expired: `getAccessToken` is asked again) and after a logout elsewhere ends it
 * (then the ticket or the token is refused: the promise rejects with `StreamError` 401).
 */
export function followEvents(options: FollowEventsOptions): Promise<FollowEnd> {
  const url = `${trimmed(options.baseUrl)}/v1/events`;
  const transport = options.transport ?? (typeof (globalThis as { EventSource?: unknown }).EventSource === 'function' && !options.fetch ? 'eventsource' : 'fetch');
  if (transport === 'eventsource') return viaEventSource(url, options);
  return viaFetch(url, options, async () => ({ authorization: `Bearer ${await options.getAccessToken()}` }), () => false);
}

const trimmed = (baseUrl: string) => baseUrl.replace(/\/+$/, '');
const sleep = (ms: number, signal?: AbortSignal) => new Promise<void>((resolve) => {
  if (signal?.aborted) return resolve();
  const timer = setTimeout(done, ms);
  function done() {
    clearTimeout(timer);
    signal?.removeEventListener('abort', done);
    resolve();
  }
  signal?.addEventListener('abort', done, { once: true });
});
const backoff = (options: FollowOptions, attempt: number) => Math.min(MAX_BACKOFF_MS, (options.retryMs ?? 1000) * 2 ** Math.max(0, attempt - 1));
const retryAfter = (response: Response) => Number(response.headers.get('retry-after') ?? '') * 1000 || undefined;
const bodyOf = async (response: Response) => response.json().catch(() => undefined);
const startingId = (options: FollowOptions) => {
  const id = Number(options.lastEventId ?? 0);
  if (!Number.isSafeInteger(id) || id < 0) throw new TypeError(`lastEventId must be a non-negative integer, received '${String(options.lastEventId)}'`);
  return id;
};

/** The frames of an SSE byte stream (the WHATWG format: `\n`, `\r\n` or `\r` line ends, multi-line data). */
async function* frames(body: ReadableStream<Uint8Array>, touched: () => void): AsyncGenerator<{ id?: string; event?: string; data?: string }> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let frame: { id?: string; event?: string; data?: string } = {};
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      touched();
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
        // A lone \r at the buffer's end may be half of \r\n: wait for more.
        if (buffer[end] === '\r' && end === buffer.length - 1) break;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (buffer.startsWith('\r\n', end) ? 2 : 1));
        if (line === '') {
          if (frame.data !== undefined || frame.id !== undefined) yield frame;
          frame = {};
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`;
        else if (field === 'id' || field === 'event') frame[field] = value;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/** Reads the stream with fetch, reconnecting with Last-Event-ID until `isEnd` or the signal. */
async function viaFetch(
  url: string, options: FollowOptions, authHeaders: (() => Promise<Record<string, string>>) | undefined, isEnd: (event: StreamEvent) => boolean,
): Promise<FollowEnd> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  let last = startingId(options);
  let attempt = 0;
  let refusedOnce = false;
  while (!options.signal?.aborted) {
    if (attempt > 0) {
      options.onReconnect?.({ lastEventId: last, attempt });
      await sleep(backoff(options, attempt), options.signal);
      if (options.signal?.aborted) break;
    }
    attempt += 1;
    const connection = new AbortController();
    const stop = () => connection.abort();
    options.signal?.addEventListener('abort', stop, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const touched = () => {
      clearTimeout(idle);
      idle = setTimeout(stop, options.idleTimeoutMs ?? 45_000);
    };
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream', ...(await authHeaders?.()) };
      if (last > 0) headers['last-event-id'] = String(last);
      const response = await fetchImpl(url, { headers, signal: connection.signal, cache: 'no-store' });
      if (response.status === 204) return { lastEventId: last, reason: 'ended' };
      if (response.status === 429 || response.status === 503) {
        await response.body?.cancel();
        await sleep(retryAfter(response) ?? backoff(options, attempt), options.signal);
        continue;
      }
      if (response.status === 401 && authHeaders && !refusedOnce) {
        // The token may have expired between asking and sending: ask for it once more before giving up.
        refusedOnce = true;
        await response.body?.cancel();
        attempt = 0;
        continue;
      }
      if (response.status !== 200 || !response.body) throw new StreamError(response.status, await bodyOf(response));
      refusedOnce = false;
      attempt = 1; // connected: the next reconnect waits the base time again
      touched();
      for await (const frame of frames(response.body, touched)) {
        if (frame.data === undefined || frame.id === undefined) continue;
        const id = Number(frame.id);
        if (!(id > last)) continue; // never twice
        last = id;
        let event: StreamEvent;
        try {
          event = { id, event: frame.event ?? 'message', data: JSON.parse(frame.data) as PushedEvent };
          await options.onEvent(event);
        } catch (error) {
          throw new Fatal(error); // the caller's handler threw (or a frame was not JSON): not retried
        }
        if (isEnd(event)) return { lastEventId: last, reason: 'terminal' };
      }
      // The service ended the stream (a token's expiry, a restart): reconnect at once.
      attempt = 0;
    } catch (error) {
      if (error instanceof Fatal) throw error.reason;
      if (error instanceof StreamError) throw error;
      if (options.signal?.aborted) break;
      // A network failure or the idle timeout: reconnect after the backoff.
    } finally {
      clearTimeout(idle);
      options.signal?.removeEventListener('abort', stop);
      connection.abort();
    }
  }
  return { lastEventId: last, reason: 'aborted' };
}

/**
 * The browser path of `followEvents`: a ticket per connection, EventSource to read. EventSource's
 * own reconnect would resend the spent ticket (401), so every error closes it and this opens a new
 * one with a new ticket and `?lastEventId=`.
 */
async function viaEventSource(url: string, options: FollowEventsOptions): Promise<FollowEnd> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const EventSourceImpl = (globalThis as unknown as { EventSource: typeof EventSource }).EventSource;
  let last = startingId(options);
  let attempt = 0;
  while (!options.signal?.aborted) {
    if (attempt > 0) {
      options.onReconnect?.({ lastEventId: last, attempt });
      await sleep(backoff(options, attempt), options.signal);
      if (options.signal?.aborted) break;
    }
    attempt += 1;
    let ticket: string;
    try {
      const response = await fetchImpl(`${url}/ticket`, { method: 'POST', headers: { authorization: `Bearer ${await options.getAccessToken()}` }, signal: options.signal });
      if (response.status === 429 || response.status === 503) continue;
      if (response.status !== 200) throw new StreamError(response.status, await bodyOf(response));
      ticket = ((await response.json()) as { ticket: string }).ticket;
    } catch (error) {
      if (error instanceof StreamError) throw error;
      continue; // a network failure (or the abort, which ends the loop)
    }
    const query = `?ticket=${encodeURIComponent(ticket)}${last > 0 ? `&lastEventId=${last}` : ''}`;
    const outcome = await new Promise<{ failed?: unknown; opened: boolean }>((resolve) => {
      const source = new EventSourceImpl(url + query);
      let chain = Promise.resolve();
      let opened = false;
      let settled = false;
      const finish = (result: { failed?: unknown }) => {
        if (settled) return;
        settled = true;
        source.close();
        options.signal?.removeEventListener('abort', onAbort);
        void chain.then(() => resolve({ ...result, opened }));
      };
      const onAbort = () => finish({});
      options.signal?.addEventListener('abort', onAbort, { once: true });
      source.onopen = () => { opened = true; };
      source.onerror = () => finish({});
      const onMessage = (message: MessageEvent<string>) => {
        chain = chain.then(async () => {
          if (settled) return;
          const id = Number(message.lastEventId);
          if (!(id > last)) return; // never twice
          last = id;
          try {
            await options.onEvent({ id, event: message.type, data: JSON.parse(message.data) as PushedEvent });
          } catch (error) {
            finish({ failed: error });
          }
        });
      };
      for (const type of EVENT_TYPES) source.addEventListener(type, onMessage as EventListener);
    });
    if (outcome.failed !== undefined) throw outcome.failed;
    if (outcome.opened) attempt = 1;
  }
  return { lastEventId: last, reason: 'aborted' };
}
