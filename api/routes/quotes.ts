import { Router } from 'express';
import type { TradesService } from '../../trades/service.ts';
import { notFound } from '../errors.ts';
import { registry } from '../openapi/operations.ts';
import { errorResponses } from '../schemas/common.ts';
import { quoteQuery, quoteResponse } from '../schemas/quotes.ts';
import { parseOrThrow } from '../validation.ts';

registry.registerPath({
  method: 'get', path: '/v1/quotes', operationId: 'getQuote', tags: ['Trades'], summary: 'Quote a deposit: which ads take it, for how much, until when',
  description: [
    'Public. For `amount` on the route, the ads POST /v1/trades/create would reserve against now (at most 20, best ' +
      'first), each with what the Bridger deposits (`orderAmount`) and receives (`adAmount`), the ad\'s bounds and ' +
      'available balance, and when a reservation made now would run out.',
    'An ad is listed only if it passes every check create makes of the ad: ACTIVE, no close under way, the amount ' +
      'within its bounds and exactly convertible, its available balance covering adAmount, fewer than ' +
      'MAX_OPEN_RESERVATIONS_PER_AD unfunded reservations. The quote reserves nothing. Create checks the caller too ' +
      '(its wallet, its funding, not its own ad).',
    'No ad takes the amount: 200 with `quotes` empty and `unavailable` naming each cause (below every minimum, ' +
      'above every maximum, too little available, an amount that does not convert exactly, ...). An unknown route is 404.',
  ].join('\n\n'),
  request: { query: quoteQuery },
  responses: { 200: { description: 'The quote', content: { 'application/json': { schema: quoteResponse } } }, ...errorResponses(404, 422, 429) },
});

/** GET /v1/quotes (public). */
export function quotesRouter(deps: { trades: TradesService }, router: Router = Router()): Router {
  router.get('/quotes', async (req, res) => {
    const { routeId, amount } = parseOrThrow(quoteQuery, req.query);
    const quote = await deps.trades.quote(routeId, amount);
    if (!quote) throw notFound(`route ${routeId} not found`, 'TOKEN_ROUTE_NOT_FOUND');
    res.json(quote);
  });
  return router;
}
