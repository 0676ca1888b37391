import { adAmountOf, orderAmountStep, routePricing, type PricedToken, type RoutePrice, type RouteRate } from '../../domain/route-pricing.ts';

/**
 * The terms trade creation holds a deposit to, as pure functions: `create` (trades/use-cases/create-trade.ts)
 * refuses by them and the quote (trades/use-cases/quote.ts) previews by them, so a quote that lists an ad
 * for an amount has passed the very checks create will make.
 */

/** A route as pricing needs it (db/repositories/registry-cache.ts `RouteWithTokens` is one). */
export interface PricedRoute {
  adToken: PricedToken;
  orderToken: PricedToken;
  rate: RouteRate | null;
}

/** The deposit priced in the ad token, or why it cannot be: `field` is the request field at fault. */
export type DepositPrice =
  | { ok: true; adAmount: bigint; price: RoutePrice }
  | { ok: false; field: 'routeId'; reason: 'ROUTE_NOT_PRICED'; problem: string }
  | { ok: false; field: 'amount'; reason: 'INEXACT_CONVERSION'; problem: string; amountStep: bigint };

/**
 * `amount` (order token base units) priced by the route into the ad token's base units, exactly as
 * the order will carry it (`adAmount`), or the problem: the route cannot be priced, or the amount
 * does not convert exactly (or converts to 0), with the deposit step that does.
 */
export function priceDeposit(route: PricedRoute, amount: bigint): DepositPrice {
  // The ad's pool is in the ad token's units: the route prices the deposit in them.
  const pricing = routePricing(route.adToken, route.orderToken, route.rate);
  if (!pricing.ok) return { ok: false, field: 'routeId', reason: 'ROUTE_NOT_PRICED', problem: pricing.problem };
  const adAmount = adAmountOf(amount, pricing.price);
  if (adAmount === null) {
    const amountStep = orderAmountStep(pricing.price);
    return {
      ok: false, field: 'amount', reason: 'INEXACT_CONVERSION', amountStep,
      problem: `${amount} ${route.orderToken.symbol} base units do not convert exactly into ${route.adToken.symbol} ` +
        `base units on this route (${pricing.price.orderUnits} : ${pricing.price.adUnits}): use a multiple ` +
        `of ${amountStep}`,
    };
  }
  return { ok: true, adAmount, price: pricing.price };
}

/** The problem with `amount` against the ad's minimum and maximum (order token base units), or null when it lies within them. */
export function boundsProblem(ad: { minAmount: string | null; maxAmount: string | null }, amount: bigint): string | null {
  if ((ad.minAmount !== null && amount < BigInt(ad.minAmount)) || (ad.maxAmount !== null && amount > BigInt(ad.maxAmount))) {
    return `must lie within the ad's bounds [${ad.minAmount ?? '0'}, ${ad.maxAmount ?? 'no maximum'}], received ${amount}`;
  }
  return null;
}
