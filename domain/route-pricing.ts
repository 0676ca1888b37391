/**
 * How a route converts the Bridger's deposit into what the Maker locks and the Bridger receives
 * (docs/trades.md "Amounts across chains"). An order carries both amounts, each in its own chain's
 * smallest unit: `orderAmount` of the order token and `adAmount` of the ad token, both in the order
 * hash, so each contract moves its own and no chain ever moves the other's number.
 */

/** What pricing needs to know about a token. `asset` null: unknown, it converts only by a stated rate. */
export interface PricedToken {
  symbol: string;
  decimals: number;
  asset: string | null;
}

/** A stated rate: `orderUnits` base units of the order token are worth `adUnits` base units of the ad token. */
export interface RouteRate {
  orderUnits: string;
  adUnits: string;
}

/** adAmount = orderAmount × adUnits / orderUnits, exactly. */
export interface RoutePrice {
  adUnits: bigint;
  orderUnits: bigint;
}

export type RoutePricing = { ok: true; price: RoutePrice } | { ok: false; problem: string };

/**
 * The route's price: its stated rate when it has one, else, between two tokens of the same asset,
 * the scale of their decimals (a 6-decimal and a 7-decimal USD token: 1 base unit is worth 10).
 * Tokens of different (or unknown) assets with no stated rate cannot be priced; the problem says why.
 */
export function routePricing(adToken: PricedToken, orderToken: PricedToken, rate: RouteRate | null): RoutePricing {
  if (rate) {
    const orderUnits = BigInt(rate.orderUnits);
    const adUnits = BigInt(rate.adUnits);
    if (orderUnits <= 0n || adUnits <= 0n) return { ok: false, problem: `its rate must be two positive integers, received ${rate.orderUnits}:${rate.adUnits}` };
    return { ok: true, price: { orderUnits, adUnits } };
  }
  if (adToken.asset === null || orderToken.asset === null || adToken.asset !== orderToken.asset) {
    return {
      ok: false,
      problem: `cannot be priced: its tokens are different assets ` +
        `(${adToken.symbol} ${adToken.asset ?? 'unknown'}, ${orderToken.symbol} ${orderToken.asset ?? 'unknown'}) ` +
        `and it states no rate`,
    };
  }
  const shift = adToken.decimals - orderToken.decimals;
  return { ok: true, price: shift >= 0 ? { adUnits: 10n ** BigInt(shift), orderUnits: 1n } : { adUnits: 1n, orderUnits: 10n ** BigInt(-shift) } };
}

/**
 * `orderAmount` (order token base units) in ad token base units at `price`, or null when it does
 * not convert exactly (a remainder would be value created or lost on one side) or converts to 0.
 */
export function adAmountOf(orderAmount: bigint, price: RoutePrice): bigint | null {
  const scaled = orderAmount * price.adUnits;
  if (scaled % price.orderUnits !== 0n) return null;
  const adAmount = scaled / price.orderUnits;
  return adAmount > 0n ? adAmount : null;
}

/** The smallest deposit step that converts exactly at `price`: every exact orderAmount is a multiple of it. */
export function orderAmountStep(price: RoutePrice): bigint {
  return price.orderUnits / gcd(price.orderUnits, price.adUnits);
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}
