import { Router } from 'express';
import type { Knex } from 'knex';
import { findChainByChainId, listChains } from '../../db/repositories/chains.ts';
import { notFound } from '../errors.ts';
import { registry } from '../openapi/operations.ts';
import { presentChain } from '../presenters.ts';
import { errorResponses, page } from '../schemas/common.ts';
import { chainIdParams, chainsQuery } from '../schemas/queries.ts';
import { chainSchema } from '../schemas/resources.ts';
import { parseOrThrow } from '../validation.ts';

registry.registerPath({
  method: 'get', path: '/v1/chains', operationId: 'listChains', tags: ['Chains'], summary: 'List supported chains',
  description: 'Chains the registry holds (read-only; operators manage them with the registry file). Filters combine with AND.',
  request: { query: chainsQuery },
  responses: { 200: { description: 'One page of chains', content: { 'application/json': { schema: page(chainSchema) } } }, ...errorResponses(422, 429) },
});
registry.registerPath({
  method: 'get', path: '/v1/chains/{chainId}', operationId: 'getChain', tags: ['Chains'], summary: 'One chain by its public numeric chain ID',
  description: 'The chain with this public chain id (Stellar has none: the registry gives it a number).',
  request: { params: chainIdParams },
  responses: { 200: { description: 'The chain', content: { 'application/json': { schema: chainSchema } } }, ...errorResponses(404, 422, 429) },
});

/** GET /v1/chains and /v1/chains/:chainId (public). */
export function chainsRouter(deps: { knex: Knex }, router: Router = Router()): Router {
  router.get('/chains', async (req, res) => {
    const { cursor, limit = 25, ...filter } = parseOrThrow(chainsQuery, req.query);
    const { items, nextCursor } = await listChains(deps.knex, filter, limit, cursor);
    res.json({ data: items.map(presentChain), nextCursor });
  });
  router.get('/chains/:chainId', async (req, res) => {
    const { chainId } = parseOrThrow(chainIdParams, req.params);
    const chain = await findChainByChainId(deps.knex, chainId);
    if (!chain) throw notFound(`chain ${chainId} not found`, 'CHAIN_NOT_FOUND');
    res.json(presentChain(chain));
  });
  return router;
}
