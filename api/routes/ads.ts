import { Router, type Request, type RequestHandler } from 'express';
import type { AdsService } from '../../ads/service.ts';
import type { Principal } from '../../auth/service.ts';
import { canonicalAddressLoose } from '../../chains/address.ts';
import { adsListScope, adsPage, adVersionsPage, visibleAd } from '../../ads/queries.ts';
import type { AdRecord } from '../../db/repositories/ads.ts';
import type { RegistryCache } from '../../db/repositories/registry-cache.ts';
import { notFound } from '../errors.ts';
import { principalOf } from '../middleware/auth.ts';
import { bearerAuth, registry } from '../openapi/operations.ts';
import { presentAd, presentAdUpdate } from '../presenters.ts';
import { cachedList } from '../cached-list.ts';
import { answeredNotModified, privateRead, sendJsonText, weakEtag } from '../http-cache.ts';
import {
  closeAdBody, closeAdResponse, confirmAdResponse, confirmBody, createAdBody, createAdResponse, fundAdBody, fundAdResponse,
  updateAdBody, updateAdResponse, withdrawAdBody, withdrawAdResponse,
} from '../schemas/ads.ts';
import { errorResponses, page } from '../schemas/common.ts';
import { adsQuery, idParams } from '../schemas/queries.ts';
import { adSchema } from '../schemas/resources.ts';
import { parseOrThrow } from '../validation.ts';

/** The per-user limits on ad requests (ads/service.ts `assertRequestRoom`), as the operations state them. */
const OPEN_REQUESTS_LIMIT = 'A user may have at most MAX_OPEN_AD_REQUESTS_PER_USER (default 50) unconfirmed ad ' +
  'requests still in their confirmation window: one more is 429 naming the limit, with Retry-After, and records nothing.';
const PER_USER_LIMITS = `At most MAX_PENDING_ADS_PER_USER (default 20) PENDING ads per user, ` +
  `and ${OPEN_REQUESTS_LIMIT.charAt(0).toLowerCase()}${OPEN_REQUESTS_LIMIT.slice(1)}`;
const json = <T>(schema: T, description: string) => ({ description, content: { 'application/json': { schema } } });
const body = <T>(schema: T) => ({ body: { required: true, content: { 'application/json': { schema } } } });
const secured = { security: [{ [bearerAuth.name]: [] }] };
/** Public, with more shown to a caller who sends a token: `{}` (no token) or the Bearer token. */
const optionallySecured = { security: [{}, { [bearerAuth.name]: [] }] };
const MAKER_ONLY = 'Only the ad creator (the caller\'s wallet of the ad chain\'s kind) may call it: anyone else gets 403.';
const SIGNED = 'Returns signed AdManager call data (EIP-712 on EVM, ed25519 with signerPublicKey on Stellar) valid ' +
  'until `deadline`; send it to the ad chain, then POST /v1/ads/{id}/confirm with the transaction hash.';

registry.registerPath({
  method: 'get', path: '/v1/ads', operationId: 'listAds', tags: ['Ads'], summary: 'List published ads', ...optionallySecured,
  description: "Ads whose create is not yet confirmed on chain (PENDING) are not listed, except to their creator " +
    "asking with status=PENDING and a Bearer token.",
  request: { query: adsQuery },
  responses: { 200: json(page(adSchema), 'One page of ads'), ...errorResponses(401, 422, 429) },
});
registry.registerPath({
  method: 'get', path: '/v1/ads/{id}', operationId: 'getAd', tags: ['Ads'], summary: 'One ad', ...optionallySecured,
  description: 'A PENDING ad is visible to its creator only (with a Bearer token); others get 404.',
  request: { params: idParams },
  responses: { 200: json(adSchema, 'The ad'), ...errorResponses(404, 422, 429) },
});
registry.registerPath({
  method: 'post', path: '/v1/ads/create', operationId: 'createAd', tags: ['Ads'], summary: 'Create an ad (signed AdManager.createAd call data)', ...secured,
  description: `The ad is PENDING (unlisted) until its create transaction is confirmed. ${SIGNED} The Maker is the ` +
    `caller's wallet of the ad chain's kind; creatorDstAddress is on the order chain. ${PER_USER_LIMITS}`,
  request: body(createAdBody),
  responses: { 200: json(createAdResponse, 'Signed call data and the new ad id'), ...errorResponses(401, 403, 422, 429, 503) },
});
registry.registerPath({
  method: 'post', path: '/v1/ads/{id}/fund', operationId: 'fundAd', tags: ['Ads'], summary: 'Top up the pool (signed AdManager.fundAd call data)', ...secured,
  description: `${SIGNED} The pool grows when confirmed. ${MAKER_ONLY} 409 on a PENDING or CLOSED ad. ${OPEN_REQUESTS_LIMIT}`,
  request: { params: idParams, ...body(fundAdBody) },
  responses: { 200: json(fundAdResponse, 'Signed call data'), ...errorResponses(401, 403, 404, 409, 422, 429) },
});
registry.registerPath({
  method: 'post',
  path: '/v1/ads/{id}/withdraw',
  operationId: 'withdrawFromAd',
  tags: ['Ads'],
  summary: 'Withdraw from the pool (signed AdManager.withdrawFromAd call data)',
  ...secured,
  description: `At most the available (unreserved, unlocked) balance, else 409; the amount is held from now until ` +
    `confirmed or expired. ${SIGNED} ${MAKER_ONLY} ${OPEN_REQUESTS_LIMIT}`,
  request: { params: idParams, ...body(withdrawAdBody) },
  responses: { 200: json(withdrawAdResponse, 'Signed call data'), ...errorResponses(401, 403, 404, 409, 422, 429) },
});
registry.registerPath({
  method: 'post', path: '/v1/ads/{id}/close', operationId: 'closeAd', tags: ['Ads'], summary: 'Close the ad (signed AdManager.closeAd call data)', ...secured,
  description: `The remaining available balance goes to \`to\`; irreversible once confirmed. 409 while trades hold ` +
    `reservations. ${SIGNED} ${MAKER_ONLY} ${OPEN_REQUESTS_LIMIT}`,
  request: { params: idParams, ...body(closeAdBody) },
  responses: { 200: json(closeAdResponse, 'Signed call data'), ...errorResponses(401, 403, 404, 409, 422, 429) },
});
registry.registerPath({
  method: 'post',
  path: '/v1/ads/{id}/confirm',
  operationId: 'confirmAdTransaction',
  tags: ['Ads'],
  summary: 'Confirm a create, fund, withdraw or close transaction',
  ...secured,
  description: 'Verifies the transaction on the ad chain against the pending request it answers (contract, event, ' +
    'reqHash, ad id, amount, finality) and applies it once. The same transaction again answers the same and changes ' +
    'nothing. A transaction not yet final is 409 with Retry-After: retry. One answering no pending request of this ' +
    'ad is 422.',
  request: { params: idParams, ...body(confirmBody) },
  responses: { 200: json(confirmAdResponse, 'Recorded'), ...errorResponses(401, 403, 404, 409, 422, 429, 503) },
});
registry.registerPath({
  method: 'patch',
  path: '/v1/ads/{id}/update',
  operationId: 'updateAd',
  tags: ['Ads'],
  summary: 'Change status, bounds or metadata (no transaction)',
  ...secured,
  description: `status ACTIVE or PAUSED; minAmount <= maxAmount (null clears a bound); metadata replaces. Allowed ` +
    `from ACTIVE, PAUSED, EXHAUSTED; 409 on PENDING or CLOSED. ${MAKER_ONLY}`,
  request: { params: idParams, ...body(updateAdBody) },
  responses: { 200: json(updateAdResponse, 'The updated ad'), ...errorResponses(401, 403, 404, 409, 422, 429) },
});

export interface AdsRouterDeps {
  ads: AdsService;
  registryCache: RegistryCache;
  knex: import('knex').Knex;
  requireAuth: RequestHandler;
}

/** /v1/ads: the public reads and the Maker's mutations. */
export function adsRouter(deps: AdsRouterDeps, router: Router = Router()): Router {
  const { ads, requireAuth } = deps;
  const adList = cachedList<AdRecord>();
  /** The caller when a Bearer token was sent (and valid), else undefined: for reads that show more to an owner. */
  const caller = (req: Request) => new Promise<Principal | undefined>((resolve, reject) => {
    if (!req.headers.authorization) return resolve(undefined);
    requireAuth(req, req.res!, (error?: unknown) => (error ? reject(error) : resolve(req.user)));
  });

  router.get('/ads', async (req, res) => {
    const { cursor, limit = 25, ...filter } = parseOrThrow(adsQuery, req.query);
    if (filter.creatorAddress !== undefined) filter.creatorAddress = canonicalAddressLoose(filter.creatorAddress);
    const scope = await adsListScope(filter, () => caller(req));
    await adList.send(req, res, () => deps.registryCache.current(), () => deps.registryCache.version, {
      versions: () => adVersionsPage(deps.knex, scope, limit, cursor),
      rows: () => adsPage(deps.knex, scope, limit, cursor),
      presenter: async (rows) => {
        const tokens = await deps.registryCache.tokensById(rows.flatMap((ad) => [ad.adTokenId, ad.orderTokenId]));
        return (ad) => presentAd(ad, tokens);
      },
      own: scope.creators !== undefined,
    });
  });
  router.get('/ads/:id', async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const visible = await visibleAd(deps.knex, id, () => caller(req));
    if (!visible) throw notFound(`ad ${id} not found`, 'AD_NOT_FOUND');
    const { ad, own } = visible;
    const tokens = await deps.registryCache.tokensById([ad.adTokenId, ad.orderTokenId]);
    const generation = deps.registryCache.version;
    if (own) privateRead(res);
    else if (answeredNotModified(req, res, weakEtag([generation, ad.id, ad.version]))) return;
    sendJsonText(res, adList.text(ad, generation, (row) => presentAd(row, tokens)));
  });

  router.post('/ads/create', requireAuth, async (req, res) => {
    res.json(await ads.create(principalOf(req), parseOrThrow(createAdBody, req.body)));
  });
  router.post('/ads/:id/fund', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const { poolAmountTopUp } = parseOrThrow(fundAdBody, req.body);
    res.json(await ads.fund(principalOf(req), id, poolAmountTopUp));
  });
  router.post('/ads/:id/withdraw', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const { poolAmountWithdraw, to } = parseOrThrow(withdrawAdBody, req.body);
    res.json(await ads.withdraw(principalOf(req), id, poolAmountWithdraw, to));
  });
  router.post('/ads/:id/close', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const { to } = parseOrThrow(closeAdBody, req.body);
    res.json(await ads.close(principalOf(req), id, to));
  });
  router.post('/ads/:id/confirm', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const { txHash } = parseOrThrow(confirmBody, req.body);
    await ads.confirm(principalOf(req), id, txHash);
    res.json({ adId: id, success: true });
  });
  router.patch('/ads/:id/update', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    res.json(presentAdUpdate(await ads.update(principalOf(req), id, parseOrThrow(updateAdBody, req.body))));
  });
  return router;
}
