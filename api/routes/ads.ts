import { Router } from 'express';
import type { Knex } from 'knex';
import { canonicalAddressLoose } from '../../chains/address.ts';
import { findAd, listAds } from '../../db/repositories/ads.ts';
import type { RegistryCache } from '../../db/repositories/registry-cache.ts';
import { notFound } from '../errors.ts';
import { registry } from '../openapi/registry.ts';
import { presentAd } from '../presenters.ts';
import { errorResponses, page } from '../schemas/common.ts';
import { adsQuery, idParams } from '../schemas/queries.ts';
import { adSchema } from '../schemas/resources.ts';
import { parseOrThrow } from '../validation.ts';

registry.registerPath({
  method: 'get', path: '/v1/ads', tags: ['Ads'], summary: 'List published ads',
  description: 'Ads whose create is not yet confirmed on chain (PENDING) are not listed.',
  request: { query: adsQuery },
  responses: { 200: { description: 'One page of ads', content: { 'application/json': { schema: page(adSchema) } } }, ...errorResponses(422, 429) },
});
registry.registerPath({
  method: 'get', path: '/v1/ads/{id}', tags: ['Ads'], summary: 'One ad',
  request: { params: idParams },
  responses: { 200: { description: 'The ad', content: { 'application/json': { schema: adSchema } } }, ...errorResponses(404, 422, 429) },
});

/** GET /v1/ads and /v1/ads/:id (public reads). */
export function adsRouter(deps: { knex: Knex; registryCache: RegistryCache }): Router {
  const router = Router();
  router.get('/ads', async (req, res) => {
    const { cursor, limit = 25, ...filter } = parseOrThrow(adsQuery, req.query);
    if (filter.creatorAddress !== undefined) filter.creatorAddress = canonicalAddressLoose(filter.creatorAddress);
    const { items, nextCursor } = await listAds(deps.knex, filter, limit, cursor);
    const tokens = await deps.registryCache.tokensById(items.flatMap((ad) => [ad.adTokenId, ad.orderTokenId]));
    res.json({ data: items.map((ad) => presentAd(ad, tokens)), nextCursor });
  });
  router.get('/ads/:id', async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const ad = await findAd(deps.knex, id);
    if (!ad) throw notFound(`ad ${id} not found`);
    const tokens = await deps.registryCache.tokensById([ad.adTokenId, ad.orderTokenId]);
    res.json(presentAd(ad, tokens));
  });
  return router;
}
