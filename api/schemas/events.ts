import { PUSHED_EVENT_TYPES, TRADE_STATUSES, AD_STATUSES } from '../../domain/index.ts';
import { z } from '../openapi/operations.ts';
import { addressOut, amountOut } from './common.ts';

/**
 * The pushed events (domain/pushed-events.ts) as the OpenAPI document shows them: one schema per
 * event type, the same payload over server-sent events (`data:`) and webhooks (the POST body).
 */

const unlockDue = z.enum(['MAKER', 'BRIDGER']).openapi({
  description: "Whose unlock is due by default, as GET /v1/trades/{id} says: MAKER (the ad-chain unlock, AdManager, " +
    "pays the Bridger; the Bridger may take it too) first; BRIDGER (the order-chain unlock, OrderPortal, pays the " +
    "Maker; the Maker may send it too) once the first is confirmed. null outside LOCKED.",
});
const unlockableBy = z.array(z.enum(['MAKER', 'BRIDGER'])).openapi({
  description: 'Who may ask for this unlock now (POST /v1/trades/{id}/unlock), its default party first: the ad side ' +
    'to the Maker and to the Bridger (with `side: "ad"`), the order side to the Bridger and to the Maker.',
  example: ['MAKER', 'BRIDGER'],
});
const side = z.enum(['ad', 'order']);

const tradeSnapshot = {
  tradeId: z.string().uuid(),
  adId: z.string().uuid(),
  status: z.enum(TRADE_STATUSES),
  proofReady: z.boolean(),
  bridgerClaimed: z.boolean(),
  adCreatorClaimed: z.boolean(),
  unlockDue: unlockDue.nullable(),
};

const envelope = <T extends z.ZodTypeAny>(type: (typeof PUSHED_EVENT_TYPES)[number], data: T, name: string, description: string) =>
  z.object({
    type: z.literal(type),
    timestamp: z.string().openapi({ description: 'When the change was committed (ISO 8601).', example: '2026-11-24T02:15:14.123Z' }),
    data,
  }).openapi(name, { description });

export const pushedEventSchemas = [
  envelope('trade.created', z.object({
    ...tradeSnapshot, routeId: z.string().uuid(),
    amount: amountOut.openapi({ description: "What the Bridger deposits, in the order token's smallest unit (equals orderAmount)." }),
    orderAmount: amountOut.openapi({ description: "What the OrderPortal takes from the Bridger and pays the Maker, in the order token's smallest unit." }),
    adAmount: amountOut.openapi({
      description: "What the AdManager locks from the ad and pays the Bridger, in the ad token's smallest unit " +
        "(orderAmount priced by the route).",
    }),
    adCreatorAddress: addressOut, bridgerAddress: addressOut,
  }),
    'TradeCreatedEvent', 'A Bridger created a trade against the ad (reserved, PENDING): the first event of every trade stream.'),
  envelope('trade.status_changed', z.object({ ...tradeSnapshot, previousStatus: z.enum(TRADE_STATUSES) }),
    'TradeStatusChangedEvent', 'The trade moved: DEPOSITED (the deposit is verified; the Maker may lock), LOCKED, SETTLED, EXPIRED.'),
  envelope('trade.proof_ready', z.object(tradeSnapshot), 'TradeProofReadyEvent', 'The proof exists and verified.'),
  envelope('trade.unlock_due', z.object({
    ...tradeSnapshot,
    unlockDue,
    side: side.openapi({
      description: '`ad`: AdManager.unlock on the ad chain; `order`: OrderPortal.unlock on the order chain.',
    }),
    unlockableBy,
  }),
    'TradeUnlockDueEvent',
    'The due unlock may be asked for now (LOCKED and the proof ready): first the ad side (unlockDue MAKER; the ' +
      'Bridger may ask too, with `side: "ad"`), then the order side (unlockDue BRIDGER; the Maker may ask too). ' +
      '`unlockableBy` lists who may.'),
  envelope('trade.claimed', z.object({ ...tradeSnapshot, side }),
    'TradeClaimedEvent', "One side's unlock is confirmed: `ad` paid the Bridger (bridgerClaimed), `order` paid the Maker (adCreatorClaimed)."),
  envelope('trade.expired', z.object({ ...tradeSnapshot, reason: z.enum(['reservation', 'lock_window', 'lock_released']) }),
    'TradeExpiredEvent',
    '`reservation`: no deposit was confirmed in time; `lock_window`: no lock in time (the amount went back to the ' +
      'ad; the Bridger refunds on chain after the refund time); `lock_released`: the Maker\'s lock was released on ' +
      'chain after its lock expiry, the ad-side unlock never made (the amount is back in the ad; the Bridger refunds ' +
      'its deposit on chain after the refund time).'),
  envelope('ad.confirmed', z.object({
    adId: z.string().uuid(), action: z.enum(['createAd', 'fundAd', 'withdrawFromAd', 'closeAd']), txHash: z.string(),
    status: z.enum(AD_STATUSES), poolAmount: amountOut, availableAmount: amountOut,
  }), 'AdConfirmedEvent', "One of the Maker's ad transactions is confirmed (per-user stream and webhooks only)."),
] as const;

/** Any pushed event. */
export const pushedEventSchema = z.union(pushedEventSchemas).openapi('PushedEvent');

/** POST /v1/events/ticket's answer. */
export const eventTicketSchema = z.object({
  ticket: z.string().openapi({
    description: 'Opens one stream: `GET /v1/events?ticket=<ticket>` (URL-safe, 43 characters).',
    example: 'q3F0Zr1o8mN2kVx9-_aB4cD5eF6gH7iJ8kL9mN0oP1q',
  }),
  expiresAt: z.string().openapi({
    description: 'When the ticket stops opening anything (ISO 8601): SSE_TICKET_TTL_SECONDS after it was issued, ' +
      'never past the access token that asked.',
    example: '2026-11-26T15:01:00.000Z',
  }),
}).openapi('EventTicket');

/**
 * One item of a stream: a frame's fields, `data` the JSON text of a PushedEvent. Before OpenAPI 3.2
 * (which adds `itemSchema`), the `schema` of a `text/event-stream` describes one event: that is how
 * schemathesis (ST108 "SSE event violates schema") and other 3.1 tools read it, so a `type: string`
 * schema there has every event flagged. This one validates each event, its `data` parsed as JSON
 * against PushedEvent (`contentMediaType` + `contentSchema`, JSON Schema 2020-12).
 */
const streamItemSchema = {
  type: 'object' as const,
  description: 'One server-sent event of the stream (a frame of `field: value` lines ending with a blank line), not the JSON body of the response: '
    + 'the response is `text/event-stream` text (read it with EventSource or an SSE parser; the client package\'s followTrade/followEvents do). '
    + 'Comment lines (`: heartbeat`) and the first frame (`retry: 2000`) carry no event.',
  required: ['id', 'event', 'data'],
  properties: {
    id: {
      type: 'string' as const,
      pattern: '^[0-9]+$',
      description: "The event's position in this stream (1, 2, 3...): send the last one seen as Last-Event-ID to resume.",
    },
    event: { type: 'string' as const, enum: [...PUSHED_EVENT_TYPES], description: 'The event type (equals `data.type`).' },
    data: {
      type: 'string' as const, contentMediaType: 'application/json', contentSchema: { $ref: '#/components/schemas/PushedEvent' },
      description: 'The event as one line of JSON: a PushedEvent (the same body webhooks deliver).',
    },
    retry: { type: 'integer' as const, description: 'Milliseconds EventSource waits before reconnecting.' },
  },
};

/** The streams' `200` content: `text/event-stream`, each item `{id, event, data}` with `data` the JSON of a PushedEvent. */
export const eventStreamContent = {
  'text/event-stream': { schema: streamItemSchema },
};

/** How the stream is written, for the operations' descriptions. */
export const SSE_FORMAT =
  'A `text/event-stream`: each event is a frame `id: <position>`, `event: <type>`, `data: <PushedEvent JSON>`; ' +
  '`: heartbeat` comment lines every SSE_HEARTBEAT_SECONDS keep proxies from closing an idle stream; `retry: 2000` first. ' +
  'To resume, send the last id seen as the `Last-Event-ID` header (EventSource does on reconnect) or `?lastEventId=`: ' +
  'the stream replays every committed event after it, in order, with no gap, on whichever API replica answers. ' +
  `Event types: ${PUSHED_EVENT_TYPES.join(', ')}. At most SSE_MAX_STREAMS_PER_CLIENT streams per client and API ` +
    `process (429 with Retry-After beyond), and SSE_MAX_STREAMS per API process in all (503 with Retry-After beyond).`;
