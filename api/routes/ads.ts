import { Router, type Request, type RequestHandler } from 'express';
import type { AdsService } from '../../ads/service.ts';
import type { Principal } from '../../auth/service.ts';
import { canonicalAddressLoose } from '../../chains/address.ts';
import { findAd, listAds, listAdVersions, type AdRecord } from '../../db/repositories/ads.ts';
import type { RegistryCache } from '../../db/repositories/registry-cache.ts';
import { notFound, unauthorized } from '../errors.ts';
import { principalOf } from '../middleware/auth.ts';
import { bearerAuth, registry } from '../openapi/operations.ts';
import { presentAd, presentAdUpdate, presentPageJson } from '../presenters.ts';
import { answeredNotModified, pageEtag, privateRead, sendJsonBytes, sendJsonText, weakEtag } from '../http-cache.ts';
import { PresentedPages } from '../presented-pages.ts';
import { PresentedRows } from '../presented-rows.ts';
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
  const adTexts = new PresentedRows<AdRecord>();
  const adPages = new PresentedPages();
  /** The caller when a Bearer token was sent (and valid), else undefined: for reads that show more to an owner. */
  const caller = (req: Request) => new Promise<Principal | undefined>((resolve, reject) => {
    if (!req.headers.authorization) return resolve(undefined);
    requireAuth(req, req.res!, (error?: unknown) => (error ? reject(error) : resolve(req.user)));
  });

  router.get('/ads', async (req, res) => {
    const { cursor, limit = 25, ...filter } = parseOrThrow(adsQuery, req.query);
    if (filter.creatorAddress !== undefined) filter.creatorAddress = canonicalAddressLoose(filter.creatorAddress);
    let creators: string[] | undefined;
    if (filter.status === 'PENDING') {
      const principal = await caller(req);
      if (!principal) throw unauthorized('status=PENDING lists your own pending ads: send your Bearer access token');
      creators = Object.values(principal.wallets);
    }
    // The page's ids and row versions first: enough to answer 304, and to reuse the body of a page
    // of exactly these versions or the text of every ad version already presented
    // (docs/benchmarks.md "Read path").
    const generation = await deps.registryCache.current();
    const versions = await listAdVersions(deps.knex, filter, limit, cursor, creators);
    // Caller-specific pages (their own pending ads) are neither cached by anyone nor kept here.
    if (creators) privateRead(res);
    else {
      const kept = adPages.find(generation, versions);
      if (answeredNotModified(req, res, kept?.etag ?? pageEtag(generation, versions))) return;
      if (kept !== undefined) return sendJsonBytes(res, kept.body);
    }
    const known = adTexts.known(versions.items, generation);
    if (known !== undefined) {
      const text = presentPageJson(known, versions.nextCursor);
      return creators ? sendJsonText(res, text) : sendJsonBytes(res, adPages.keep(generation, versions, text).body);
    }
    // An ad on the page is new or was written since: read the whole page again, in one snapshot.
    const page = await listAds(deps.knex, filter, limit, cursor, creators);
    const tokens = await deps.registryCache.tokensById(page.items.flatMap((ad) => [ad.adTokenId, ad.orderTokenId]));
    const fresh = deps.registryCache.version;
    const text = presentPageJson(adTexts.textsOf(page.items, fresh, (ad) => presentAd(ad, tokens)), page.nextCursor);
    if (creators) return sendJsonText(res, text);
    const presented = adPages.keep(fresh, page, text);
    res.setHeader('ETag', presented.etag);
    sendJsonBytes(res, presented.body);
  });
  router.get('/ads/:id', async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const ad = await findAd(deps.knex, id);
    if (!ad) throw notFound(`ad ${id} not found`, 'AD_NOT_FOUND');
    const tokens = await deps.registryCache.tokensById([ad.adTokenId, ad.orderTokenId]);
    const generation = deps.registryCache.version;
    if (ad.status === 'PENDING') {
      const principal = await caller(req);
      if (!principal || !Object.values(principal.wallets).includes(ad.creatorAddress)) throw notFound(`ad ${id} not found`, 'AD_NOT_FOUND');
      privateRead(res);
    } else if (answeredNotModified(req, res, weakEtag([generation, ad.id, ad.version]))) return;
    sendJsonText(res, adTexts.text(ad, generation, (row) => presentAd(row, tokens)));
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
