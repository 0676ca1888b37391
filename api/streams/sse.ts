import type { Request, Response } from 'express';
import type { StoredPushedEvent } from '../../db/repositories/pushed-events.ts';
import { pushedEventJson } from '../../domain/index.ts';

export interface SseOptions {
  /** A comment line this often, so proxies keep an idle stream open. */
  heartbeatMs: number;
  /** What EventSource waits before reconnecting. */
  retryMs: number;
  /**
   * Unsent output beyond this drops the connection (a client that does not read): its buffer is
   * freed at once rather than held for a reader that may never come; it resumes with Last-Event-ID.
   */
  maxBufferedBytes: number;
}

/** An open text/event-stream response. */
export interface SseStream {
  /** Writes the events as SSE frames: `id` is the stream position, `event` the type, `data` the Standard Webhooks payload. */
  send(events: StoredPushedEvent[]): void;
  end(): void;
  /** Called once, when the stream ends for any reason (client gone, ended here). */
  onClose(listener: () => void): void;
}

/** The frame of one event. */
export function sseFrame(event: StoredPushedEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${pushedEventJson(event)}\n\n`;
}

/** Starts a server-sent events response on `res`. */
export function openSse(req: Request, res: Response, options: SseOptions): SseStream {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Connection', 'keep-alive');
  // nginx and friends buffer responses unless told not to.
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  req.socket.setNoDelay(true);
  res.write(`retry: ${options.retryMs}\n\n`);
  const listeners: Array<() => void> = [];
  let ended = false;
  const finish = () => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    for (const listener of listeners) listener();
  };
  const heartbeat = setInterval(() => {
    if (!ended) res.write(': heartbeat\n\n');
  }, options.heartbeatMs);
  res.on('close', finish);
  const stream: SseStream = {
    send(events) {
      if (ended) return;
      res.write(events.map(sseFrame).join(''));
      if (res.writableLength > options.maxBufferedBytes) {
        // Not end(): that would keep the unsent output in memory until the client reads it.
        res.destroy();
        finish();
      }
    },
    end() {
      if (ended) return;
      res.end();
      finish();
    },
    onClose(listener) {
      listeners.push(listener);
    },
  };
  return stream;
}
