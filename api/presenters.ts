import { adapterOf } from '../chains/adapters.ts';
import { orderAmountStep, routePricing } from '../domain/index.ts';
import { unlockableBy, whoseUnlockIsDue } from '../trades/lifecycle/index.ts';
import type { AdRecord } from '../db/repositories/ads.ts';
import type { Chain } from '../db/repositories/chains.ts';
import type { RouteWithTokens, TokenWithChain } from '../db/repositories/registry-cache.ts';
import type { TradeRecord } from '../db/repositories/trades.ts';
import { tradeStepOf } from '../domain/trade-steps.ts';

/**
 * Records -> the JSON the spec shows. Fields are picked one by one (never spread), so nothing
 * internal (RPC URLs, recipients, secrets) can leak by being added to a record later.
 */

export function presentChain(chain: Chain) {
  return {
    id: chain.id,
    name: chain.name,
    chainId: chain.chainId,
    kind: chain.kind,
    adManagerAddress: chain.adManagerAddress,
    orderPortalAddress: chain.orderPortalAddress,
    // The kind's own fields (Stellar: the network a wallet signs for, and the RPC URL the operator
    // publishes for clients), never the service's own RPC URLs.
    ...adapterOf(chain.kind).publicFields(chain),
    createdAt: chain.createdAt.toISOString(),
    updatedAt: chain.updatedAt.toISOString(),
  };
}

function tokenFields(token: TokenWithChain) {
  return { id: token.id, symbol: token.symbol, name: token.name, address: token.address, decimals: token.decimals, kind: token.kind };
}

/** A token as nested in a route: with its chain's id, name and public chain id. */
export function presentRouteToken(token: TokenWithChain) {
  return { ...tokenFields(token), chain: { id: token.chain.id, name: token.chain.name, chainId: token.chain.chainId } };
}

export function presentRoute(route: RouteWithTokens) {
  return {
    id: route.id,
    metadata: route.metadata,
    createdAt: route.createdAt.toISOString(),
    updatedAt: route.updatedAt.toISOString(),
    adToken: presentRouteToken(route.adToken),
    orderToken: presentRouteToken(route.orderToken),
    price: presentRoutePrice(route),
  };
}

/** How a deposit converts into the ad token on this route, as trade creation prices it; null if it cannot be priced. */
function presentRoutePrice(route: RouteWithTokens) {
  const pricing = routePricing(route.adToken, route.orderToken, route.rate);
  if (!pricing.ok) return null;
  const { orderUnits, adUnits } = pricing.price;
  return { orderUnits: orderUnits.toString(), adUnits: adUnits.toString(), amountStep: orderAmountStep(pricing.price).toString() };
}

// Token objects come from the registry cache and never change (a reload makes new ones), so each
// summary is built once and shared by every ad that nests it.
const summaries = new WeakMap<TokenWithChain, ReturnType<typeof summarise>>();
const summarise = (token: TokenWithChain) => ({ ...tokenFields(token), chainId: token.chain.chainId });

/** A token as summarised in an ad: the public chain id only. */
function presentTokenSummary(token: TokenWithChain) {
  let summary = summaries.get(token);
  if (!summary) summaries.set(token, (summary = summarise(token)));
  return summary;
}

export function presentAd(ad: AdRecord, tokens: Map<string, TokenWithChain>) {
  return {
    id: ad.id,
    creatorAddress: ad.creatorAddress,
    routeId: ad.routeId,
    adTokenId: ad.adTokenId,
    orderTokenId: ad.orderTokenId,
    poolAmount: ad.poolAmount,
    availableAmount: ad.availableAmount,
    // The management view's "locked": everything held for trades in progress.
    lockedAmount: ad.heldAmount,
    minAmount: ad.minAmount,
    maxAmount: ad.maxAmount,
    status: ad.status,
    metadata: ad.metadata ?? null,
    adToken: presentTokenSummary(tokens.get(ad.adTokenId)!),
    orderToken: presentTokenSummary(tokens.get(ad.orderTokenId)!),
    createdAt: ad.createdAt,
    updatedAt: ad.updatedAt,
  };
}

/** A list page as JSON text, from items already serialised (`PresentedRows`): `{data, nextCursor}`. */
export function presentPageJson(items: string[], nextCursor: string | null): string {
  return `{"data":[${items.join(',')}],"nextCursor":${JSON.stringify(nextCursor)}}`;
}

/**
 * What PATCH /v1/ads/:id/update answers: the ad's status as listed and, beside it, the status the
 * Maker set (`setStatus`), which an EXHAUSTED ad would otherwise hide.
 */
export function presentAdUpdate(ad: AdRecord) {
  return {
    id: ad.id,
    status: ad.status,
    // update() refuses PENDING and CLOSED ads, so what it stored is ACTIVE or PAUSED.
    setStatus: ad.baseStatus as 'ACTIVE' | 'PAUSED',
    creatorAddress: ad.creatorAddress,
    minAmount: ad.minAmount,
    maxAmount: ad.maxAmount,
    metadata: ad.metadata ?? null,
  };
}

export function presentTrade(trade: TradeRecord, routes: Map<string, RouteWithTokens>) {
  const route = routes.get(trade.routeId)!;
  return {
    id: trade.id,
    routeId: trade.routeId,
    adId: trade.adId,
    adCreatorAddress: trade.adCreatorAddress,
    adChainId: trade.adChainId,
    orderChainId: trade.orderChainId,
    bridgerAddress: trade.bridgerAddress,
    amount: trade.amount,
    status: trade.status,
    adCreatorClaimed: trade.adCreatorClaimed,
    bridgerClaimed: trade.bridgerClaimed,
    unlockDue: whoseUnlockIsDue(trade),
    unlockableBy: unlockableBy(trade),
    createdAt: trade.createdAt,
    updatedAt: trade.updatedAt,
    ad: { id: trade.adId, routeId: trade.routeId, creatorAddress: trade.adCreatorAddress },
    route: { id: route.id, adToken: presentRouteToken(route.adToken), orderToken: presentRouteToken(route.orderToken) },
    orderHash: trade.orderHash,
    transactions: trade.transactions.flatMap(({ chainId, txHash, event, sentBy }) => {
      const step = tradeStepOf(event, chainId, trade);
      return step ? [{ step, chainId, txHash, ...(sentBy ? { sentBy } : {}) }] : [];
    }),
  };
}
