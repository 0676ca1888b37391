import type { Knex } from 'knex';
import { runStatement, statement } from '../prepared.ts';

/**
 * The reads behind GET /v1/quotes: which of a route's ads would take a deposit now, judged by the
 * conditions trade creation checks under the ad row lock (trades/use-cases/create-trade.ts): ACTIVE, no
 * live close request (db/repositories/ad-requests.ts `hasLiveClose`), the amount within the ad's
 * bounds, `adAmount` available, fewer than the per-ad cap of unfunded reservations open.
 */

/** What a quote needs to know of one ad: amounts as decimal strings. */
export interface QuotableAd {
  adId: string;
  minAmount: string | null;
  maxAmount: string | null;
  availableAmount: string;
}

export interface QuoteQuery {
  routeId: string;
  /** The deposit, order token base units: what the ad's bounds are checked against. */
  orderAmount: bigint;
  /** The deposit priced into the ad token: what the ad's available balance must cover. */
  adAmount: bigint;
  /** A close request still pending with a deadline after this counts as live (create's `cutoff`: now - CONFIRM_GRACE_SECONDS). */
  closeCutoff: Date;
  now: Date;
  /** MAX_OPEN_RESERVATIONS_PER_AD. */
  maxOpenPerAd: number;
}

// The same live-close and unfunded-reservation conditions as create's (see the module comment),
// written once here for both statements. Both are scalar subqueries, asked per candidate ad through
// an index (ad_requests (ad_id, status), trades_unfunded_ad_idx): a bare NOT EXISTS would be planned
// as an anti join reading every close request ever made.
const LIVE_CLOSE = (cutoff: string) => `(select exists (select 1 from ad_requests r where r.ad_id = ads.id and r.action = 'closeAd'
  and (r.status = 'EXECUTED' or (r.status = 'PENDING' and r.deadline > ${cutoff}))))`;
const OPEN_RESERVATIONS = (now: string) => `(select count(*) from trades t where t.ad_id = ads.id and t.status = ` +
  `'PENDING' and t.reservation_expires_at > ${now})`;

// Each placeholder appears once, in order (db/repositories/list-plans.test.ts EXPLAINs the text as sent).
const quoteStatement = statement(`select ads.id as "adId", ads.min_amount::text as "minAmount", ads.max_amount::text as "maxAmount",
  ads.available_amount::text as "availableAmount"
  from ads
  where ads.route_id = $1 and ads.status = 'ACTIVE' and ads.available_amount >= $2::numeric
    and (ads.min_amount is null or ads.min_amount <= $3::numeric)
    and (ads.max_amount is null or ads.max_amount >= $4::numeric)
    and not ${LIVE_CLOSE('$5::timestamptz')}
    and ${OPEN_RESERVATIONS('$6::timestamptz')} < $7::int
  order by ads.available_amount desc, ads.created_at, ads.id
  limit $8::int`);

/**
 * At most `limit` ads of the route that would take the deposit now, most available first, then
 * oldest first, then by id: one index range scan (`ads_quote_idx`) that stops at the limit.
 */
export async function quotableAds(knex: Knex, query: QuoteQuery, limit: number): Promise<QuotableAd[]> {
  return runStatement<QuotableAd>(knex, quoteStatement, [
    query.routeId, query.adAmount.toString(), query.orderAmount.toString(), query.orderAmount.toString(),
    query.closeCutoff, query.now, query.maxOpenPerAd, limit,
  ]);
}

/** Why an ad that is open for trades (base status ACTIVE) would not take the deposit: the first of create's checks it fails. */
export type AdRefusal = 'BELOW_MINIMUM' | 'ABOVE_MAXIMUM' | 'AD_CLOSING' | 'INSUFFICIENT_LIQUIDITY' | 'RESERVATIONS_FULL';

/** How many of the route's open ads a refusal covers, with the figures a client needs to change its amount. */
export interface RefusalCount {
  reason: AdRefusal;
  adCount: number;
  /** Among those ads: the smallest minimum, the largest maximum (order token base units), the largest available (ad token base units). */
  smallestMinimum: string | null;
  largestMaximum: string | null;
  largestAvailable: string;
}

// Create's order of checks: bounds, then (under the lock) status, close, liquidity, reservation cap.
// Placeholders numbered in the order they appear, as in the quote statement.
const refusalStatement = statement(`select reason, count(*)::int as "adCount", min(min_amount)::text as "smallestMinimum",
  max(max_amount)::text as "largestMaximum", max(available_amount)::text as "largestAvailable"
  from (select ads.min_amount, ads.max_amount, ads.available_amount, case
      when ads.min_amount is not null and ads.min_amount > $1::numeric then 'BELOW_MINIMUM'
      when ads.max_amount is not null and ads.max_amount < $2::numeric then 'ABOVE_MAXIMUM'
      when ${LIVE_CLOSE('$3::timestamptz')} then 'AD_CLOSING'
      when ads.available_amount < $4::numeric then 'INSUFFICIENT_LIQUIDITY'
      when ${OPEN_RESERVATIONS('$5::timestamptz')} >= $6::int then 'RESERVATIONS_FULL'
      end as reason
    from ads where ads.route_id = $7 and ads.base_status = 'ACTIVE') as judged
  where reason is not null
  group by reason`);

/**
 * Why no ad of the route takes the deposit: per refusal, how many of its open ads (base status
 * ACTIVE, exhausted ones included) it covers. Empty when the route has no open ad. Asked only after
 * `quotableAds` found none; reads every open ad of the route (`ads_route_id_idx`).
 */
export async function adRefusals(knex: Knex, query: QuoteQuery): Promise<RefusalCount[]> {
  return runStatement<RefusalCount>(knex, refusalStatement, [
    query.orderAmount.toString(), query.orderAmount.toString(), query.closeCutoff, query.adAmount.toString(), query.now, query.maxOpenPerAd,
    query.routeId,
  ]);
}
