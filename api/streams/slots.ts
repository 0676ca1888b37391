import type { Request, Response } from 'express';
import { AppError } from '../errors.ts';
import { clientKey } from '../middleware/fixed-window-limit.ts';

/** How many event streams may be open, per client (IP, IPv6 /56) and in the whole process. */
export interface SlotLimits {
  perClient: number;
  perProcess: number;
}

/** What a refused client is told to wait before asking again (a slot frees when some stream ends). */
const RETRY_AFTER_SECONDS = '5';

/**
 * True when the response can no longer be written: the client closed or reset the connection,
 * or the response already ended. A stream must not be opened on it: its 'close' event may already
 * have fired, and a listener attached now would never run.
 */
export function responseGone(req: Request, res: Response): boolean {
  return res.destroyed || res.writableEnded || req.socket.destroyed;
}

/**
 * Runs `listener` once when the response is over, however that happens: ended here, an error
 * answer, the client closing or resetting the connection. If it is already over, runs it now
 * (Node emits 'close' once; a listener attached after it would wait forever).
 */
export function onResponseGone(req: Request, res: Response, listener: () => void): void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    listener();
  };
  res.once('close', once);
  if (responseGone(req, res)) once();
}

/**
 * The event streams' slots. A request takes its slot before its first await, so a client
 * past its cap (or a full process) is refused before it costs a database read; the slot is tied
 * to the response's end (`onResponseGone`), so it comes back on every way a request can end:
 * refused by a later check, failed, reset by the client before, during or after the handler's
 * awaits, or a stream that ran and closed.
 */
export class StreamSlots {
  private readonly perClient = new Map<string, number>();
  private total = 0;

  constructor(private readonly limits: SlotLimits) {}

  /** Slots held in this process (streams open or being opened). */
  get held(): number {
    return this.total;
  }

  /**
   * Holds one slot for this response until it ends. Throws 429 (with Retry-After) when the client
   * holds its SSE_MAX_STREAMS_PER_CLIENT, 503 when the process holds SSE_MAX_STREAMS.
   */
  take(req: Request, res: Response): void {
    const key = clientKey(req.ip);
    const open = this.perClient.get(key) ?? 0;
    if (open >= this.limits.perClient) {
      res.setHeader('Retry-After', RETRY_AFTER_SECONDS);
      throw new AppError(429, `too many open event streams (${open}): at most ${this.limits.perClient} per client; close one first`, { code: 'STREAM_LIMIT' });
    }
    if (this.total >= this.limits.perProcess) {
      // 503, not 429: not this client's doing; another replica (or this one, shortly) can serve it.
      throw new AppError(503, `this API process serves its maximum of ${this.limits.perProcess} event streams; retry later`);
    }
    this.perClient.set(key, open + 1);
    this.total += 1;
    onResponseGone(req, res, () => {
      this.total -= 1;
      const left = (this.perClient.get(key) ?? 1) - 1;
      if (left <= 0) this.perClient.delete(key);
      else this.perClient.set(key, left);
    });
  }
}
