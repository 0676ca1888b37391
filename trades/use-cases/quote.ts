import type { Knex } from 'knex';
import { adRefusals, quotableAds, type AdRefusal, type QuoteQuery, type RefusalCount } from '../../db/repositories/ad-quotes.ts';
import type { RegistryCache } from '../../db/repositories/registry-cache.ts';
import { priceDeposit } from './create-terms.ts';
import { depositTtlSeconds, reservationExpiry, type ReservationSettings } from '../lifecycle/index.ts';

/** At most this many ads in one quote: the work of a quote is bounded whatever the route holds. */
export const QUOTE_LIMIT = 20;

export interface QuoteSettings extends ReservationSettings {
  confirmGraceSeconds: number;
  maxOpenReservationsPerAd: number;
}

export interface QuoteDeps {
  knex: Knex;
  registryCache: RegistryCache;
  settings: QuoteSettings;
  nowMs: () => number;
}

/** One ad that would take the deposit now, and on what terms. Amounts are decimal strings. */
export interface AdQuote {
  adId: string;
  /** What the Bridger deposits on the order chain (order token base units): the amount asked. */
  orderAmount: string;
  /** What the ad locks and pays the Bridger on the ad chain (ad token base units): the route's price, as create signs it. */
  adAmount: string;
  minAmount: string | null;
  maxAmount: string | null;
  /** Ad token base units. */
  availableAmount: string;
  /** When a reservation made by a create at `quotedAt` would run out unless the deposit is seen. */
  reservationExpiresAt: string;
}

export type UnavailableReason = 'ROUTE_NOT_PRICED' | 'INEXACT_CONVERSION' | 'NO_OPEN_ADS' | AdRefusal;

/** Why the amount finds no ad: one cause, the ads it covers, and the figure that would change the answer. */
export interface Unavailable {
  reason: UnavailableReason;
  message: string;
  /** How many of the route's open ads this cause covers; 0 for a cause of the route or the amount itself. */
  adCount: number;
  /**
   * BELOW_MINIMUM: the smallest minimum; ABOVE_MAXIMUM: the largest maximum (order token base units).
   * INSUFFICIENT_LIQUIDITY: the most available in one ad (ad token base units). INEXACT_CONVERSION:
   * the deposit step that converts exactly (order token base units). Otherwise null.
   */
  bound: string | null;
}

export interface Quote {
  routeId: string;
  amount: string;
  /** The deposit priced into the ad token; null when it cannot be (see `unavailable`). */
  adAmount: string | null;
  quotedAt: string;
  quotes: AdQuote[];
  /** Empty when `quotes` is not; else every cause, in the order create checks them. */
  unavailable: Unavailable[];
}

const REFUSAL_ORDER: readonly AdRefusal[] = ['BELOW_MINIMUM', 'ABOVE_MAXIMUM', 'AD_CLOSING', 'INSUFFICIENT_LIQUIDITY', 'RESERVATIONS_FULL'];

/**
 * The quote use case: for `amount` on a route, the ads a trade create would reserve against now,
 * best first, or why there are none. Reads the database only (no chain): one indexed query, and a
 * second one only to explain an empty answer.
 */
export function createQuotes(deps: QuoteDeps) {
  const { settings } = deps;
  return {
    /**
     * Best first: the most `adAmount` received for the amount (today every ad of a route gives the
     * route's price, so all tie), then the most available liquidity, then the oldest ad. An ad is
     * listed only if it passes every check of create that concerns the ad (trades/use-cases/create-terms.ts
     * for the bounds and the price; the rest in db/repositories/ad-quotes.ts), so creating on it with
     * this amount now passes them too. Create may still free more (lapsed withdraw holds, reservations
     * whose wallets no longer hold the deposit), so an ad missing here may yet take the trade; and
     * the caller's own checks (its wallet, funding, not its own ad) are create's alone.
     * Undefined when no such route exists.
     */
    async quote(routeId: string, amountText: string): Promise<Quote | undefined> {
      const route = await deps.registryCache.route(routeId);
      if (!route) return undefined;
      const nowMs = deps.nowMs();
      const quotedAt = new Date(nowMs).toISOString();
      const amount = BigInt(amountText);
      const priced = priceDeposit(route, amount);
      const base = { routeId: route.id, amount: amountText, quotedAt, quotes: [] };
      if (!priced.ok) {
        return {
          ...base, adAmount: null,
          unavailable: [{
            reason: priced.reason, message: `${priced.field} ${priced.problem}`, adCount: 0,
            bound: priced.reason === 'INEXACT_CONVERSION' ? priced.amountStep.toString() : null,
          }],
        };
      }
      const query: QuoteQuery = {
        routeId: route.id, orderAmount: amount, adAmount: priced.adAmount,
        closeCutoff: new Date(nowMs - settings.confirmGraceSeconds * 1000), now: new Date(nowMs), maxOpenPerAd: settings.maxOpenReservationsPerAd,
      };
      const ads = await quotableAds(deps.knex, query, QUOTE_LIMIT);
      const adAmount = priced.adAmount.toString();
      if (ads.length > 0) {
        // As create: the deposit request's deadline is now + its TTL, the reservation a margin after.
        const reservationExpiresAt = reservationExpiry(Math.floor(nowMs / 1000) + depositTtlSeconds(settings)).toISOString();
        return {
          ...base, adAmount, unavailable: [],
          quotes: ads.map((ad) => ({
            adId: ad.adId,
            orderAmount: amountText,
            adAmount,
            minAmount: ad.minAmount,
            maxAmount: ad.maxAmount,
            availableAmount: ad.availableAmount,
            reservationExpiresAt,
          })),
        };
      }
      const refusals = await adRefusals(deps.knex, query);
      const unavailable = refusals.length === 0
        ? [{ reason: 'NO_OPEN_ADS' as const, message: `route ${route.id} has no ACTIVE ad`, adCount: 0, bound: null }]
        : REFUSAL_ORDER.flatMap((reason) => refusals.filter((r) => r.reason === reason))
          .map((r) => explain(r, amountText, `${adAmount} ${route.adToken.symbol}`, settings.maxOpenReservationsPerAd));
      return { ...base, adAmount, unavailable };
    },
  };
}

export type QuotesService = ReturnType<typeof createQuotes>;

function explain(refusal: RefusalCount, amount: string, adAmount: string, maxOpenPerAd: number): Unavailable {
  const ads = refusal.adCount === 1 ? '1 ad' : `${refusal.adCount} ads`;
  const { reason, adCount } = refusal;
  switch (reason) {
    case 'BELOW_MINIMUM':
      return {
        reason,
        adCount,
        bound: refusal.smallestMinimum,
        message: `amount ${amount} is below the minimum of ${ads} (the smallest is ${refusal.smallestMinimum})`,
      };
    case 'ABOVE_MAXIMUM':
      return {
        reason,
        adCount,
        bound: refusal.largestMaximum,
        message: `amount ${amount} is above the maximum of ${ads} (the largest is ${refusal.largestMaximum})`,
      };
    case 'AD_CLOSING':
      return { reason, adCount, bound: null, message: `closing ads take no trades (${ads})` };
    case 'INSUFFICIENT_LIQUIDITY':
      return {
        reason,
        adCount,
        bound: refusal.largestAvailable,
        message: `too little available to cover ${adAmount} base units (${ads}; the most available is ${refusal.largestAvailable})`,
      };
    case 'RESERVATIONS_FULL':
      return {
        reason,
        adCount,
        bound: null,
        message: `ads holding ${maxOpenPerAd} trades awaiting their deposit take no more until one is deposited or runs out (${ads})`,
      };
  }
}
