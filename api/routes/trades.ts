import { Router, type Request, type RequestHandler } from 'express';
import type { Knex } from 'knex';
import type { TradesService } from '../../trades/service.ts';
import { canonicalAddressLoose } from '../../chains/address.ts';
import type { RegistryCache } from '../../db/repositories/registry-cache.ts';
import type { TradeFilter, TradeRecord } from '../../db/repositories/trades.ts';
import type { Principal } from '../../domain/principal.ts';
import { tradesPage, tradeVersionsPage, visibleTrade } from '../../trades/queries.ts';
import { badRequest, notFound } from '../errors.ts';
import { principalOf } from '../middleware/auth.ts';
import { bearerAuth, registry } from '../openapi/operations.ts';
import { presentTrade } from '../presenters.ts';
import { cachedList } from '../cached-list.ts';
import { answeredNotModified, privateRead, sendJsonText, weakEtag } from '../http-cache.ts';
import { errorResponses, page } from '../schemas/common.ts';
import { idParams, tradesQuery } from '../schemas/queries.ts';
import { tradeSchema } from '../schemas/resources.ts';
import {
  confirmTradeBody, confirmTradeResponse, createTradeBody, createTradeResponse, lockTradeResponse, tradeParamsResponse,
  unlockTradeBody, unlockTradeResponse,
} from '../schemas/trades.ts';
import { parseOrThrow } from '../validation.ts';

const json = <T>(schema: T, description: string) => ({ description, content: { 'application/json': { schema } } });
const body = <T>(schema: T) => ({ body: { required: true, content: { 'application/json': { schema } } } });
const secured = { security: [{ [bearerAuth.name]: [] }] };
/** Public, with more found for a caller who sends a token: `{}` (no token) or the Bearer token. */
const optionallySecured = { security: [{}, { [bearerAuth.name]: [] }] };

registry.registerPath({
  method: 'get', path: '/v1/trades/all', operationId: 'listTrades', tags: ['Trades'], summary: 'List trades',
  description: 'Every trade, newest first, public like the ads. Filters combine with AND; minAmount must not exceed ' +
    'maxAmount (400); `status` takes one or more statuses (422 naming it on an unknown one). A trade is found by its ' +
    'orderHash, or by txHash: any of its verified transactions. A Bridger who sent a deposit and lost track of it ' +
    'before confirming finds its trade by that deposit\'s txHash with a Bearer token: once the deposit is in a block ' +
    'of the order chain, one of the caller\'s own PENDING trades whose order hash its OrderPortal event carries ' +
    '(one transaction read per order chain holding such a trade; the answer is the caller\'s own, not cached). ' +
    'Pass nextCursor back as cursor for the next page.',
  ...optionallySecured,
  request: { query: tradesQuery },
  responses: {
    200: { description: 'One page of trades', content: { 'application/json': { schema: page(tradeSchema) } } },
    ...errorResponses(400, 401, 422, 429, 503),
  },
});
registry.registerPath({
  method: 'get', path: '/v1/trades/{id}', operationId: 'getTrade', tags: ['Trades'], summary: 'One trade',
  description: 'Public. `unlockDue` says whose unlock is due by default (the ad-chain unlock, the Maker\'s, first, ' +
    'then the order-chain unlock, the Bridger\'s) and `unlockableBy` who may ask for it (either party: the Bridger ' +
    'takes the ad side with `side: "ad"`). Revalidate with If-None-Match: 304 when unchanged.',
  request: { params: idParams },
  responses: { 200: { description: 'The trade', content: { 'application/json': { schema: tradeSchema } } }, ...errorResponses(404, 422, 429) },
});

const CONFIRM = 'Verified on chain (contract, event for this order hash, finality) and applied once; the same ' +
  'transaction again answers the same with `duplicate: true`. Not final yet: 409 with Retry-After. A transaction ' +
  'that is not this trade\'s, or of the wrong kind for this endpoint (the deposit or the lock sent to ' +
  'unlock/confirm, an unlock sent to confirm): 422, nothing changes. Either party may confirm.';

registry.registerPath({
  method: 'post',
  path: '/v1/trades/create',
  operationId: 'createTrade',
  tags: ['Trades'],
  summary: 'Create a trade (signed OrderPortal.createOrder call data)',
  ...secured,
  description: "The Bridger's step 1. The route must be the ad's, the ad ACTIVE, the amount within its bounds; the " +
    "amount is reserved against the ad's available balance in one row-locked transaction (409 when it cannot be " +
    "covered). Nobody trades against their own ad (403). The Bridger must hold the amount on the order chain (its " +
    "balance covering this and its other open reservations of the token) and, for an ERC-20, have approved the " +
    "OrderPortal for it (422 naming amount otherwise); a wallet and an ad carry at most " +
    "MAX_OPEN_RESERVATIONS_PER_WALLET and MAX_OPEN_RESERVATIONS_PER_AD unfunded reservations (409). The reservation " +
    "lives as long as the signed deposit request (min(TRADE_RESERVATION_TTL_SECONDS, SIGNED_REQUEST_TTL_SECONDS)): " +
    "then, unless the order chain shows the deposit, it returns to the ad (EXPIRED).",
  request: body(createTradeBody),
  responses: { 200: json(createTradeResponse, 'The trade id and the deposit call data'), ...errorResponses(401, 403, 404, 409, 422, 429) },
});
registry.registerPath({
  method: 'get', path: '/v1/trades/{id}/params', operationId: 'getTradeParams', tags: ['Trades'], summary: 'Order parameters of a trade', ...secured,
  description: 'Either party of the trade; others get 403.',
  request: { params: idParams },
  responses: { 200: json(tradeParamsResponse, 'The order parameters and the order hash'), ...errorResponses(401, 403, 404, 422, 429) },
});
registry.registerPath({
  method: 'get', path: '/v1/trades/{id}/deposit-request', operationId: 'getTradeDepositRequest', tags: ['Trades'],
  summary: 'The signed deposit call data again (the Bridger, while it is valid)', ...secured,
  description: "For a Bridger who lost create's answer: the same deposit request create answered (the same " +
    'authToken and signature; `timeToExpire` counted from now), never a second one. Only while the trade is PENDING ' +
    'and before the request\'s `deadline`: after the deposit, 409 TRADE_ALREADY_DEPOSITED; once it ran out, 409 ' +
    "DEPOSIT_REQUEST_EXPIRED (create a new trade). The trade's Bridger only: the Maker and others get 403, an " +
    'unknown trade 404.',
  request: { params: idParams },
  responses: {
    200: json(createTradeResponse, 'The trade id and the deposit call data, as create answered them'),
    ...errorResponses(401, 403, 404, 409, 422, 429),
  },
});
registry.registerPath({
  method: 'post',
  path: '/v1/trades/{id}/confirm',
  operationId: 'confirmTradeTransaction',
  tags: ['Trades'],
  summary: 'Confirm the deposit (order chain), later the lock (ad chain)',
  ...secured,
  description: `While the trade is PENDING the transaction is the Bridger's deposit; it then goes into the mirrored ` +
    `tree and the proof starts. After that it is the Maker's lock. ${CONFIRM}`,
  request: { params: idParams, ...body(confirmTradeBody) },
  responses: { 200: json(confirmTradeResponse, 'Recorded'), ...errorResponses(401, 403, 404, 409, 422, 429, 503) },
});
registry.registerPath({
  method: 'post',
  path: '/v1/trades/{id}/lock',
  operationId: 'lockTrade',
  tags: ['Trades'],
  summary: "The Maker's lock (signed AdManager.lockForOrder call data)",
  ...secured,
  description: "The ad's Maker only (403 for others), once the deposit is confirmed (409 before) and while the lock window is open.",
  request: { params: idParams },
  responses: { 200: json(lockTradeResponse, 'Signed call data and the order'), ...errorResponses(401, 403, 404, 409, 422, 429) },
});
registry.registerPath({
  method: 'post', path: '/v1/trades/{id}/unlock', operationId: 'unlockTrade', tags: ['Trades'], summary: 'Unlock with the proof (signed call data)', ...secured,
  description: [
    '**Unlock order (a safety rule): the ad-chain unlock first, the order-chain unlock only after it is confirmed.**',
    '1. The ad-chain unlock: call data for the AdManager on the ad chain, which pays the Bridger\'s recipient ' +
      'whoever sends it. It is valid only before the order\'s `lockExpiry`. The Maker gets it by default; the ' +
      'Bridger gets it by asking with `"side": "ad"` (beside the spec, whose default routes the Bridger\'s unlock to ' +
      'the OrderPortal), so a Maker who locked and walked away cannot keep the Bridger\'s deposit waiting until ' +
      '`refundTime`.',
    '2. Once that unlock is confirmed (POST /v1/trades/{id}/unlock/confirm, by either party; the trade shows ' +
      '`bridgerClaimed: true`), the Bridger (or the Maker) gets call data for the OrderPortal on the order chain, ' +
      'which pays the Maker.',
    'The order side asked for out of turn answers 409 with `Retry-After` saying which unlock is awaited; ' +
      '`unlockDue` and `unlockableBy` on GET /v1/trades/{id} show it. Why: were the Maker paid first, the Maker ' +
      'could let the lock expire and take the Bridger\'s liquidity back. The ad side asked for once it is confirmed: 409.',
    'Also needs LOCKED and a finished proof (409 saying which is missing). The body is the caller\'s wallet ' +
      'signature over the 32 bytes of the order hash, and optionally `side` (`ad` | `order`; default: the Bridger\'s ' +
      '`order`, the Maker\'s `ad`, then `order` once the ad side is confirmed).',
  ].join('\n\n'),
  request: { params: idParams, ...body(unlockTradeBody) },
  responses: { 200: json(unlockTradeResponse, 'Signed call data with the proof'), ...errorResponses(401, 403, 404, 409, 422, 429) },
});
registry.registerPath({
  method: 'post', path: '/v1/trades/{id}/unlock/confirm', operationId: 'confirmUnlock', tags: ['Trades'], summary: 'Confirm an unlock transaction', ...secured,
  description: `Sets that side's claimed flag (bridgerClaimed: the ad-chain unlock paid the Bridger; ` +
    `adCreatorClaimed: the order-chain unlock paid the Maker); SETTLED when both are set. ${CONFIRM}`,
  request: { params: idParams, ...body(confirmTradeBody) },
  responses: { 200: json(confirmTradeResponse, 'Recorded'), ...errorResponses(401, 403, 404, 409, 422, 429, 503) },
});

export interface TradesRouterDeps {
  knex: Knex;
  registryCache: RegistryCache;
  trades: TradesService;
  requireAuth: RequestHandler;
}

/** /v1/trades: the public reads and the parties' steps. */
export function tradesRouter(deps: TradesRouterDeps, router: Router = Router()): Router {
  const { trades, requireAuth } = deps;
  const tradeList = cachedList<TradeRecord>();
  router.post('/trades/create', requireAuth, async (req, res) => {
    res.json(await trades.create(principalOf(req), parseOrThrow(createTradeBody, req.body)));
  });
  router.get('/trades/:id/deposit-request', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    privateRead(res);
    res.json(await trades.depositRequest(principalOf(req), id));
  });
  router.get('/trades/:id/params', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    res.json(await trades.params(principalOf(req), id));
  });
  router.post('/trades/:id/lock', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    res.json(await trades.lock(principalOf(req), id));
  });
  router.post('/trades/:id/unlock', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const { signature, side } = parseOrThrow(unlockTradeBody, req.body);
    res.json(await trades.unlock(principalOf(req), id, signature, side));
  });
  router.post('/trades/:id/confirm', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const { txHash } = parseOrThrow(confirmTradeBody, req.body);
    const { duplicate } = await trades.confirm(principalOf(req), id, 'deposit-or-lock', txHash);
    res.json({ tradeId: id, success: true, duplicate });
  });
  router.post('/trades/:id/unlock/confirm', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const { txHash } = parseOrThrow(confirmTradeBody, req.body);
    const { duplicate } = await trades.confirm(principalOf(req), id, 'unlock', txHash);
    res.json({ tradeId: id, success: true, duplicate });
  });
  router.get('/trades/all', async (req, res) => {
    const { cursor, limit = 25, ...parsed } = parseOrThrow(tradesQuery, req.query);
    if (parsed.minAmount !== undefined && parsed.maxAmount !== undefined && BigInt(parsed.minAmount) > BigInt(parsed.maxAmount)) {
      throw badRequest('minAmount must not exceed maxAmount');
    }
    for (const key of ['adCreatorAddress', 'bridgerAddress'] as const) {
      if (parsed[key] !== undefined) parsed[key] = canonicalAddressLoose(parsed[key]);
    }
    const { filter, own } = await withUnconfirmedDeposit(parsed, cursor, req);
    await tradeList.send(req, res, () => deps.registryCache.current(), () => deps.registryCache.version, {
      versions: () => tradeVersionsPage(deps.knex, filter, limit, cursor),
      rows: () => tradesPage(deps.knex, filter, limit, cursor),
      presenter: async (rows) => {
        const routes = await deps.registryCache.routesById(rows.map((trade) => trade.routeId));
        return (trade) => presentTrade(trade, routes);
      },
      own,
    });
  });
  router.get('/trades/:id', async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const trade = await visibleTrade(deps.knex, id);
    if (!trade) throw notFound(`trade ${id} not found`, 'TRADE_NOT_FOUND');
    const routes = await deps.registryCache.routesById([trade.routeId]);
    const generation = deps.registryCache.version;
    if (answeredNotModified(req, res, weakEtag([generation, trade.id, trade.version]))) return;
    sendJsonText(res, tradeList.text(trade, generation, (row) => presentTrade(row, routes)));
  });
  return router;

  /**
   * A txHash no trade has as a verified transaction may still be the deposit of one of the signed-in
   * caller's own PENDING trades, not yet confirmed: then the list looks for that trade by its order
   * hash instead (the caller's own answer, never shared). Only for a first page, only with a token.
   */
  async function withUnconfirmedDeposit(filter: TradeFilter, cursor: string | undefined, req: Request): Promise<{ filter: TradeFilter; own: boolean }> {
    const { txHash } = filter;
    if (txHash === undefined || cursor !== undefined || !req.headers.authorization) return { filter, own: false };
    const principal = await caller(req);
    if ((await tradeVersionsPage(deps.knex, { txHash }, 1)).items.length > 0) return { filter, own: false };
    const orderHash = await trades.tradeOfDepositTransaction(principal, txHash);
    if (orderHash === null || (filter.orderHash !== undefined && filter.orderHash !== orderHash)) return { filter, own: true };
    return { filter: { ...filter, txHash: undefined, orderHash }, own: true };
  }

  /** The caller of a read that shows more to a signed-in caller: a bad or expired token is refused as on any authenticated endpoint. */
  function caller(req: Request): Promise<Principal> {
    return new Promise((resolve, reject) => {
      requireAuth(req, req.res!, (error?: unknown) => (error ? reject(error) : resolve(principalOf(req))));
    });
  }
}
