import { z } from '../openapi/operations.ts';
import { positiveAmount } from './ads.ts';
import { amountOut, timestamp, uuid } from './common.ts';
import { QUOTE_LIMIT } from '../../trades/use-cases/quote.ts';

/** GET /v1/quotes: its query and its answer (trades/use-cases/quote.ts). */

/** The examples name a route of their own (not the create bodies' example route): api/schemathesis.test.ts gives it ads to quote. */
export const QUOTE_EXAMPLE = { routeId: '5e1d7c3a-9b2f-4a6e-8c1d-2f3a4b5c6d7e', amount: '1000' } as const;

export const quoteQuery = z.strictObject({
  routeId: uuid.openapi({ description: 'The route to quote on (GET /v1/routes).', example: QUOTE_EXAMPLE.routeId }),
  amount: positiveAmount.openapi({ description: "What the Bridger would deposit, in the order token's smallest unit.", example: QUOTE_EXAMPLE.amount }),
});

export const UNAVAILABLE_REASONS = [
  'ROUTE_NOT_PRICED', 'INEXACT_CONVERSION', 'NO_OPEN_ADS', 'BELOW_MINIMUM', 'ABOVE_MAXIMUM', 'AD_CLOSING', 'INSUFFICIENT_LIQUIDITY', 'RESERVATIONS_FULL',
] as const;

const adQuote = z.object({
  adId: z.string().uuid(),
  orderAmount: amountOut.openapi({ description: "What the Bridger deposits on the order chain (order token's smallest unit): the amount asked." }),
  adAmount: amountOut.openapi({
    description: "What the ad locks and pays the Bridger on the ad chain (ad token's smallest unit): the route's " +
      "price, exactly as POST /v1/trades/create signs it.",
  }),
  minAmount: amountOut.nullable().openapi({ description: "The ad's smallest deposit (order token's smallest unit), or null." }),
  maxAmount: amountOut.nullable().openapi({ description: "The ad's largest deposit (order token's smallest unit), or null." }),
  availableAmount: amountOut.openapi({ description: "The ad's available balance now (ad token's smallest unit)." }),
  reservationExpiresAt: timestamp.openapi({
    description: 'When the reservation of a trade created at quotedAt would run out unless its deposit is seen: ' +
      'min(TRADE_RESERVATION_TTL_SECONDS, SIGNED_REQUEST_TTL_SECONDS) and a 10 s chain margin, as create computes it.',
  }),
}).openapi('AdQuote');

const unavailable = z.object({
  reason: z.enum(UNAVAILABLE_REASONS),
  message: z.string(),
  adCount: z.number().int().min(0).openapi({
    description: "How many of the route's open ads this cause covers; 0 for a cause of the route or the amount itself.",
  }),
  bound: amountOut.nullable().openapi({
    description: "BELOW_MINIMUM: the smallest minimum; ABOVE_MAXIMUM: the largest maximum (order token's smallest " +
      "unit). INSUFFICIENT_LIQUIDITY: the most available in one ad (ad token's smallest unit). INEXACT_CONVERSION: " +
      "the deposit step that converts exactly. Otherwise null.",
  }),
}).openapi('QuoteUnavailable');

export const quoteResponse = z.object({
  routeId: z.string().uuid(),
  amount: amountOut.openapi({ description: 'The amount asked (order token).' }),
  adAmount: amountOut.nullable().openapi({ description: "The amount priced into the ad token; null when the route cannot price it exactly." }),
  quotedAt: timestamp,
  quotes: z.array(adQuote).max(QUOTE_LIMIT).openapi({
    description: `At most ${QUOTE_LIMIT} ads, best first: the most adAmount for the amount (one price per route ` +
      `today, so all tie), then the most available, then the oldest ad.`,
  }),
  unavailable: z.array(unavailable).openapi({ description: 'Empty when quotes is not; else every cause, in the order trade creation checks them.' }),
}).openapi('Quote');
