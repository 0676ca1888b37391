import { Router } from 'express';
import type { Knex } from 'knex';
import { canonicalAddressLoose } from '../../chains/address.ts';
import type { RegistryCache } from '../../db/repositories/registry-cache.ts';
import { findTrade, listTrades } from '../../db/repositories/trades.ts';
import { badRequest, notFound } from '../errors.ts';
import { registry } from '../openapi/registry.ts';
import { presentTrade } from '../presenters.ts';
import { errorResponses, page } from '../schemas/common.ts';
import { idParams, tradesQuery } from '../schemas/queries.ts';
import { tradeSchema } from '../schemas/resources.ts';
import { parseOrThrow } from '../validation.ts';

registry.registerPath({
  method: 'get', path: '/v1/trades/all', tags: ['Trades'], summary: 'List trades',
  request: { query: tradesQuery },
  responses: { 200: { description: 'One page of trades', content: { 'application/json': { schema: page(tradeSchema) } } }, ...errorResponses(400, 422, 429) },
});
registry.registerPath({
  method: 'get', path: '/v1/trades/{id}', tags: ['Trades'], summary: 'One trade',
  request: { params: idParams },
  responses: { 200: { description: 'The trade', content: { 'application/json': { schema: tradeSchema } } }, ...errorResponses(404, 422, 429) },
});

/** GET /v1/trades/all and /v1/trades/:id (public reads). */
export function tradesRouter(deps: { knex: Knex; registryCache: RegistryCache }): Router {
  const router = Router();
  router.get('/trades/all', async (req, res) => {
    const { cursor, limit = 25, ...filter } = parseOrThrow(tradesQuery, req.query);
    if (filter.minAmount !== undefined && filter.maxAmount !== undefined && BigInt(filter.minAmount) > BigInt(filter.maxAmount)) {
      throw badRequest('minAmount must not exceed maxAmount');
    }
    for (const key of ['adCreatorAddress', 'bridgerAddress'] as const) {
      if (filter[key] !== undefined) filter[key] = canonicalAddressLoose(filter[key]);
    }
    const { items, nextCursor } = await listTrades(deps.knex, filter, limit, cursor);
    const routes = await deps.registryCache.routesById(items.map((trade) => trade.routeId));
    res.json({ data: items.map((trade) => presentTrade(trade, routes)), nextCursor });
  });
  router.get('/trades/:id', async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const trade = await findTrade(deps.knex, id);
    if (!trade) throw notFound(`trade ${id} not found`);
    const routes = await deps.registryCache.routesById([trade.routeId]);
    res.json(presentTrade(trade, routes));
  });
  return router;
}
