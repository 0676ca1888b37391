import { Router } from 'express';
import type { Knex } from 'knex';
import type { RegistryCache } from '../../db/repositories/registry-cache.ts';
import { findRoute, listRoutes } from '../../db/repositories/routes.ts';
import { notFound } from '../errors.ts';
import { registry } from '../openapi/operations.ts';
import { presentRoute } from '../presenters.ts';
import { errorResponses, page } from '../schemas/common.ts';
import { idParams, routesQuery } from '../schemas/queries.ts';
import { routeSchema } from '../schemas/resources.ts';
import { parseOrThrow } from '../validation.ts';

registry.registerPath({
  method: 'get', path: '/v1/routes', operationId: 'listRoutes', tags: ['Routes'], summary: 'List routes (token pairs across chains)',
  description: 'Each route pairs an ad token and an order token on different chains, with both tokens and their chains nested.',
  request: { query: routesQuery },
  responses: { 200: { description: 'One page of routes', content: { 'application/json': { schema: page(routeSchema) } } }, ...errorResponses(422, 429) },
});
registry.registerPath({
  method: 'get', path: '/v1/routes/{id}', operationId: 'getRoute', tags: ['Routes'], summary: 'One route',
  description: 'The route with both tokens and their chains.',
  request: { params: idParams },
  responses: { 200: { description: 'The route', content: { 'application/json': { schema: routeSchema } } }, ...errorResponses(404, 422, 429) },
});

/** GET /v1/routes and /v1/routes/:id (public). */
export function routesRouter(deps: { knex: Knex; registryCache: RegistryCache }, router: Router = Router()): Router {
  router.get('/routes', async (req, res) => {
    const { cursor, limit = 25, ...filter } = parseOrThrow(routesQuery, req.query);
    const { items, nextCursor } = await listRoutes(deps.knex, deps.registryCache, filter, limit, cursor);
    res.json({ data: items.map(presentRoute), nextCursor });
  });
  router.get('/routes/:id', async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const route = await findRoute(deps.registryCache, id);
    if (!route) throw notFound(`route ${id} not found`, 'TOKEN_ROUTE_NOT_FOUND');
    res.json(presentRoute(route));
  });
  return router;
}
