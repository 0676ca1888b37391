import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { z } from 'zod';
import { TERMINAL_TRADE_STATUSES, type TradeStatus } from '../../domain/index.ts';
import { findTradeLifecycle } from '../../db/repositories/trade-lifecycle.ts';
import { lastUserSeq, tradeEventsAfter } from '../../db/repositories/pushed-events.ts';
import { SignInRejected } from '../../auth/errors.ts';
import type { StreamTickets } from '../../auth/stream-tickets.ts';
import { AppError, notFound, unauthorized } from '../errors.ts';
import { accessTokenExpiry, principalOf } from '../middleware/auth.ts';
import { bearerAuth, eventTicketAuth, registry } from '../openapi/operations.ts';
import { errorResponses } from '../schemas/common.ts';
import { eventStreamContent, eventTicketSchema, SSE_FORMAT } from '../schemas/events.ts';
import { idParams } from '../schemas/queries.ts';
import type { PushedEventHub, StreamKey } from '../streams/event-hub.ts';
import { SessionWatch } from '../streams/session-watch.ts';
import { responseGone, StreamSlots } from '../streams/slots.ts';
import { openSse } from '../streams/sse.ts';
import { parseOrThrow } from '../validation.ts';

const streamQueryDoc = z.strictObject({
  lastEventId: z.string().regex(/^\d{1,15}$/).optional().openapi({
    description: 'Resume after this event id (the Last-Event-ID header wins when both are sent).',
  }),
});
const eventStream = (description: string) => ({ description, content: eventStreamContent });
/** The streams' own meanings of 429 and 503 (api/streams/slots.ts). */
const streamLimits = {
  429: {
    ...errorResponses(429)[429],
    description: 'Rate limit exceeded, or this client already holds SSE_MAX_STREAMS_PER_CLIENT streams on this API ' +
      'process; retry after Retry-After',
  },
  503: {
    ...errorResponses(503)[503],
    description: 'PostgreSQL is unavailable, or this API process already serves SSE_MAX_STREAMS streams; retry ' +
      'after Retry-After (another replica may have room)',
  },
};

registry.registerPath({
  method: 'get', path: '/v1/trades/{id}/events', operationId: 'streamTradeEvents', tags: ['Events'], summary: "A trade's status as server-sent events",
  description: `Public, like GET /v1/trades/{id}. Ids count the trade's events 1, 2, 3... The stream ends after the ` +
    `trade's terminal state (SETTLED, EXPIRED); reconnecting then with the last id gets 204 (EventSource ` +
    `stops). ${SSE_FORMAT}`,
  request: { params: idParams, query: streamQueryDoc },
  responses: {
    200: eventStream('The trade\'s events, replayed from Last-Event-ID, then live'),
    204: { description: 'The trade ended and every event was read' },
    ...errorResponses(404, 422),
    ...streamLimits,
  },
});
registry.registerPath({
  method: 'post',
  path: '/v1/events/ticket',
  operationId: 'createEventTicket',
  tags: ['Events'],
  summary: 'A single-use ticket that opens the caller\'s event stream without an Authorization header',
  security: [{ [bearerAuth.name]: [] }],
  description: 'For a browser\'s `EventSource`, which cannot send an Authorization header: `new EventSource(`${api}/v1/events?ticket=${ticket}`)`. '
    + 'The ticket opens one stream (a second use is 401), within SSE_TICKET_TTL_SECONDS (60 s by default, never past the access token that asked); '
    + 'the stream it opens is the session\'s, like one opened with the token: it ends when that access token would ' +
      'expire and when the session is revoked (logout). '
    + 'EventSource reconnects on its own with the same URL, which a spent ticket refuses (401, and EventSource stops): to resume, ask a new ticket and open '
    + '`?ticket=<new>&lastEventId=<last id seen>` (the client package\'s `followEvents` does this).',
  responses: { 200: { description: 'The ticket', content: { 'application/json': { schema: eventTicketSchema } } }, ...errorResponses(401) },
});
registry.registerPath({
  method: 'get',
  path: '/v1/events',
  operationId: 'streamEvents',
  tags: ['Events'],
  summary: "Everything about the caller's ads and trades as server-sent events",
  security: [{ [bearerAuth.name]: [] }, { [eventTicketAuth.name]: [] }],
  description: `The caller's trades (as Maker or Bridger) and ads, with a Bearer token or with \`?ticket=\` from ` +
    `POST /v1/events/ticket (for EventSource; then no Authorization header is read). A bad, expired or spent ticket ` +
    `is 401 naming the ticket; a request refused for another reason (422, 429, 503) spends its ticket all the same. ` +
    `The stream ends when the access token that opened it (or asked for its ticket) ` +
    `expires: reconnect with a fresh token (or a new ticket) and Last-Event-ID. It also ends within ` +
    `SSE_SESSION_CHECK_SECONDS when the token's session is revoked (logout, a refresh token presented twice), on ` +
    `every API process; nothing committed after the revocation is delivered on it. Ids count the caller's events 1, ` +
    `2, 3... (the same numbering webhooks deliver in). ${SSE_FORMAT}`,
  request: { query: streamQueryDoc },
  responses: { 200: eventStream('The caller\'s events, replayed from Last-Event-ID, then live'), ...errorResponses(401, 422), ...streamLimits },
});

export interface EventsRouterDeps {
  knex: Knex;
  eventHub: PushedEventHub;
  requireAuth: RequestHandler;
  /** Stream tickets (POST /v1/events/ticket, GET /v1/events?ticket=). */
  tickets: StreamTickets;
  settings: { heartbeatSeconds: number; maxStreamsPerClient: number; maxStreams: number; sessionCheckSeconds: number };
  logger?: Logger;
}

/** Of a request presenting several `ticket` values (refused: one is allowed), how many are spent. */
const MAX_TICKETS_SPENT = 8;

const position = z.string().regex(/^\d{1,15}$/, 'must be a non-negative integer (an event id of this stream)');
const tradeStreamQuery = z.strictObject({ lastEventId: position.optional() });
const userStreamQuery = z.strictObject({ lastEventId: position.optional(), ticket: z.string().optional() });

/** Where the client resumes: the Last-Event-ID header (EventSource sends it on reconnect), else `?lastEventId=`, else the start. */
function resumeFrom(req: Request, streamQuery: typeof tradeStreamQuery | typeof userStreamQuery): number {
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
 * server-sent events read from the outbox, resumable with Last-Event-ID, heartbeats. At most
 * SSE_MAX_STREAMS_PER_CLIENT open per client and SSE_MAX_STREAMS per process; each request holds
 * its slot from before its first await to its response's end, however it ends (api/streams/slots.ts). A
 * trade's stream ends after its terminal state (reconnecting then gets 204, EventSource stops); a
 * user's stream ends at its access token's expiry or, within SSE_SESSION_CHECK_SECONDS, when its
 * session is revoked (logout), and delivers nothing committed after the revocation.
 */
export function eventsRouter(deps: EventsRouterDeps, router: Router = Router()): Router {
  const slots = new StreamSlots({ perClient: deps.settings.maxStreamsPerClient, perProcess: deps.settings.maxStreams });
  const sessions = new SessionWatch(deps.knex, deps.settings.sessionCheckSeconds * 1000, deps.logger);
  const sseOptions = { heartbeatMs: deps.settings.heartbeatSeconds * 1000, retryMs: 2_000, maxBufferedBytes: 1 << 20 };

  /** Opens the stream on `res`, unless the client is already gone (closed or reset during the handler's awaits). */
  function stream(
    req: Request,
    res: Response,
    key: StreamKey,
    lastSeq: number,
    ends: { afterStatus?: (status: TradeStatus) => boolean; at?: Date; sessionId?: string } = {},
  ): void {
    if (responseGone(req, res)) return; // its slot was given back when it closed
    const sse = openSse(req, res, sseOptions);
    const endsAfter = ends.afterStatus;
    // The stream lives no longer than the token that opened it; the client reconnects with a fresh one and Last-Event-ID.
    const expiry = ends.at ? setTimeout(() => sse.end(), Math.max(0, ends.at.getTime() - Date.now())) : undefined;
    const unwatch = ends.sessionId ? sessions.watch(ends.sessionId, () => sse.end()) : undefined;
    const unsubscribe = deps.eventHub.subscribe(key, {
      lastSeq,
      ...(ends.sessionId ? { sessionId: ends.sessionId } : {}),
      deliver(events) {
        sse.send(events);
        const status = (events[events.length - 1]!.data as { status?: TradeStatus }).status;
        if (endsAfter && status && endsAfter(status)) sse.end();
      },
      end: () => sse.end(),
    });
    sse.onClose(() => {
      clearTimeout(expiry);
      unwatch?.();
      unsubscribe();
    });
  }

  router.get('/trades/:id/events', async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const lastSeq = resumeFrom(req, tradeStreamQuery);
    slots.take(req, res); // before the first await: see StreamSlots
    const trade = await findTradeLifecycle(deps.knex, id);
    if (!trade) throw notFound(`trade ${id} not found`, 'TRADE_NOT_FOUND');
    const terminal = (status: TradeStatus) => TERMINAL_TRADE_STATUSES.has(status);
    if (terminal(trade.status) && (await tradeEventsAfter(deps.knex, id, lastSeq, 1)).length === 0) {
      res.status(204).end(); // nothing more will come
      return;
    }
    stream(req, res, { kind: 'trade', id }, lastSeq, { afterStatus: terminal });
  });

  router.post('/events/ticket', deps.requireAuth, async (req, res) => {
    const expiry = accessTokenExpiry(req);
    if (!expiry) throw unauthorized();
    const issued = await deps.tickets.issue(principalOf(req), expiry);
    res.status(200).json({ ticket: issued.ticket, expiresAt: issued.expiresAt.toISOString() });
  });

  /**
   * Runs the checks made before a presented ticket is redeemed (synchronously, so a slot is still
   * taken before the first await). When one refuses, the ticket is spent before the refusal is
   * answered: the refused URL (in a log, a proxy's history, a browser's) opens nothing afterwards.
   */
  async function spentIfRefused<T>(req: Request, checks: () => T): Promise<T> {
    try {
      return checks();
    } catch (error) {
      const presented = ([] as unknown[]).concat(req.query.ticket ?? []).filter((t): t is string => typeof t === 'string');
      if (presented.length > 0) {
        await deps.tickets.revoke(presented.slice(0, MAX_TICKETS_SPENT)).catch((failure: unknown) => {
          deps.logger?.warn({ err: failure, reqId: req.id }, 'could not spend a refused stream ticket');
        });
      }
      throw error;
    }
  }

  // With `?ticket=` the ticket is the credential (EventSource sends no header); otherwise the Bearer token.
  const ticketOrBearer = (req: Request, res: Response, next: NextFunction) => (req.query.ticket === undefined ? deps.requireAuth(req, res, next) : next());
  router.get('/events', ticketOrBearer, async (req, res) => {
    const { lastSeq, ticket } = await spentIfRefused(req, () => {
      const checked = { lastSeq: resumeFrom(req, userStreamQuery), ticket: parseOrThrow(userStreamQuery, req.query).ticket };
      slots.take(req, res); // before the first await: see StreamSlots
      return checked;
    });
    let holder: { userId: string; sessionId: string; until: Date | undefined };
    if (ticket === undefined) {
      const { userId, sessionId } = principalOf(req);
      holder = { userId, sessionId, until: accessTokenExpiry(req) };
    } else {
      const redeemed = await deps.tickets.redeem(ticket).catch((error: unknown) => {
        throw error instanceof SignInRejected ? new AppError(401, error.message, { code: 'EVENT_TICKET_REJECTED' }) : error;
      });
      holder = { userId: redeemed.userId, sessionId: redeemed.sessionId, until: redeemed.streamUntil };
    }
    if (lastSeq > await lastUserSeq(deps.knex, holder.userId)) {
      throw new AppError(422, [`Last-Event-ID must be an event id of your stream, received ${lastSeq}, beyond its last`], { code: 'LAST_EVENT_ID_UNKNOWN' });
    }
    // A ticket's stream is its session's, like a Bearer one: it ends at that token's expiry and with the session (SessionWatch, the hub's snapshot).
    stream(req, res, { kind: 'user', id: holder.userId }, lastSeq, { at: holder.until, sessionId: holder.sessionId });
  });
  return router;
}
