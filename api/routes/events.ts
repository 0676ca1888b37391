import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { Knex } from 'knex';
import { z } from 'zod';
import { TERMINAL_TRADE_STATUSES, type TradeStatus } from '../../domain/index.ts';
import { findTradeLifecycle } from '../../db/repositories/trade-lifecycle.ts';
import { lastUserSeq, tradeEventsAfter } from '../../db/repositories/pushed-events.ts';
import { AppError, notFound } from '../errors.ts';
import { clientKey } from '../middleware/fixed-window-limit.ts';
import { accessTokenExpiry, principalOf } from '../middleware/auth.ts';
import { bearerAuth, registry } from '../openapi/operations.ts';
import { errorResponses } from '../schemas/common.ts';
import { pushedEventSchema, SSE_FORMAT } from '../schemas/events.ts';
import { idParams } from '../schemas/queries.ts';
import type { PushedEventHub, StreamKey } from '../streams/event-hub.ts';
import { openSse } from '../streams/sse.ts';
import { parseOrThrow } from '../validation.ts';

const streamQueryDoc = z.strictObject({
  lastEventId: z.string().optional().openapi({ description: 'Resume after this event id (the Last-Event-ID header wins when both are sent).' }),
});
const eventStream = (description: string) => ({ description, content: { 'text/event-stream': { schema: pushedEventSchema } } });

registry.registerPath({
  method: 'get', path: '/v1/trades/{id}/events', operationId: 'streamTradeEvents', tags: ['Events'], summary: "A trade's status as server-sent events",
  description: `Public, like GET /v1/trades/{id}. Ids count the trade's events 1, 2, 3... The stream ends after the trade's terminal state (SETTLED, EXPIRED); reconnecting then with the last id gets 204 (EventSource stops). ${SSE_FORMAT}`,
  request: { params: idParams, query: streamQueryDoc },
  responses: { 200: eventStream('The trade\'s events, replayed from Last-Event-ID, then live'), 204: { description: 'The trade ended and every event was read' }, ...errorResponses(404, 422, 429) },
});
registry.registerPath({
  method: 'get', path: '/v1/events', operationId: 'streamEvents', tags: ['Events'], summary: "Everything about the caller's ads and trades as server-sent events", security: [{ [bearerAuth.name]: [] }],
  description: `The caller's trades (as Maker or Bridger) and ads. The stream ends when the access token that opened it expires: reconnect with a fresh token and Last-Event-ID. Ids count the caller's events 1, 2, 3... (the same numbering webhooks deliver in). ${SSE_FORMAT}`,
  request: { query: streamQueryDoc },
  responses: { 200: eventStream('The caller\'s events, replayed from Last-Event-ID, then live'), ...errorResponses(401, 422, 429) },
});

export interface EventsRouterDeps {
  knex: Knex;
  eventHub: PushedEventHub;
  requireAuth: RequestHandler;
  settings: { heartbeatSeconds: number; maxStreamsPerClient: number };
}

const position = z.string().regex(/^\d{1,15}$/, 'must be a non-negative integer (an event id of this stream)');
const streamQuery = z.strictObject({ lastEventId: position.optional() });

/** Where the client resumes: the Last-Event-ID header (EventSource sends it on reconnect), else `?lastEventId=`, else the start. */
function resumeFrom(req: Request): number {
  const header = req.headers['last-event-id'];
  if (header !== undefined) {
    const parsed = position.safeParse(header);
    if (!parsed.success) throw new AppError(422, [`Last-Event-ID must be a non-negative integer (an event id of this stream), received '${String(header)}'`]);
    return Number(parsed.data);
  }
  const { lastEventId } = parseOrThrow(streamQuery, req.query);
  return lastEventId === undefined ? 0 : Number(lastEventId);
}

/**
 * /v1/trades/:id/events (public, like the trade) and /v1/events (the caller's ads and trades):
 * server-sent events read from the outbox, resumable with Last-Event-ID, heartbeats, at most
 * SSE_MAX_STREAMS_PER_CLIENT open per client and process. A trade's stream ends after its terminal
 * state; reconnecting to it then gets 204 (EventSource stops).
 */
export function eventsRouter(deps: EventsRouterDeps, router: Router = Router()): Router {
  const openPerClient = new Map<string, number>();
  const sseOptions = { heartbeatMs: deps.settings.heartbeatSeconds * 1000, retryMs: 2_000, maxBufferedBytes: 1 << 20 };

  /** Holds one of the client's stream slots, or answers 429. */
  function takeSlot(req: Request): () => void {
    const key = clientKey(req.ip);
    const open = openPerClient.get(key) ?? 0;
    if (open >= deps.settings.maxStreamsPerClient) {
      throw new AppError(429, `too many open event streams (${open}): at most ${deps.settings.maxStreamsPerClient} per client; close one first`);
    }
    openPerClient.set(key, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (openPerClient.get(key) ?? 1) - 1;
      if (left <= 0) openPerClient.delete(key);
      else openPerClient.set(key, left);
    };
  }

  function stream(req: Request, res: Response, key: StreamKey, lastSeq: number, ends: { afterStatus?: (status: TradeStatus) => boolean; at?: Date } = {}): void {
    const release = takeSlot(req);
    const sse = openSse(req, res, sseOptions);
    const endsAfter = ends.afterStatus;
    // The stream lives no longer than the token that opened it; the client reconnects with a fresh one and Last-Event-ID.
    const expiry = ends.at ? setTimeout(() => sse.end(), Math.max(0, ends.at.getTime() - Date.now())) : undefined;
    const unsubscribe = deps.eventHub.subscribe(key, {
      lastSeq,
      deliver(events) {
        sse.send(events);
        const status = (events[events.length - 1]!.data as { status?: TradeStatus }).status;
        if (endsAfter && status && endsAfter(status)) sse.end();
      },
      end: () => sse.end(),
    });
    sse.onClose(() => {
      clearTimeout(expiry);
      unsubscribe();
      release();
    });
  }

  router.get('/trades/:id/events', async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const lastSeq = resumeFrom(req);
    const trade = await findTradeLifecycle(deps.knex, id);
    if (!trade) throw notFound(`trade ${id} not found`);
    const terminal = (status: TradeStatus) => TERMINAL_TRADE_STATUSES.has(status);
    if (terminal(trade.status) && (await tradeEventsAfter(deps.knex, id, lastSeq, 1)).length === 0) {
      res.status(204).end(); // nothing more will come
      return;
    }
    stream(req, res, { kind: 'trade', id }, lastSeq, { afterStatus: terminal });
  });

  router.get('/events', deps.requireAuth, async (req, res) => {
    const { userId } = principalOf(req);
    const lastSeq = resumeFrom(req);
    if (lastSeq > await lastUserSeq(deps.knex, userId)) {
      throw new AppError(422, [`Last-Event-ID must be an event id of your stream, received ${lastSeq}, beyond its last`]);
    }
    stream(req, res, { kind: 'user', id: userId }, lastSeq, { at: accessTokenExpiry(req) });
  });
  return router;
}
