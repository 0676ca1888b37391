import type { Knex } from 'knex';
import { paginate, toPage } from '../pagination.ts';
import { runPrepared } from '../prepared.ts';
import { isoTimestamp } from '../sql.ts';
import { LISTED_AD_STATUSES, type AdStatus } from '../../domain/index.ts';


/** An ad as stored. Amounts are decimal strings (numeric(78,0)); `status` is the derived one. */
export interface AdRecord {
  id: string;
  creatorAddress: string;
  creatorDstAddress: string;
  routeId: string;
  adTokenId: string;
  orderTokenId: string;
  adChainId: string;
  orderChainId: string;
  poolAmount: string;
  availableAmount: string;
  reservedAmount: string;
  lockedAmount: string;
  /** reserved + locked: everything held for trades in progress (the management view's "locked"). */
  heldAmount: string;
  minAmount: string | null;
  maxAmount: string | null;
  status: AdStatus;
  metadata: unknown;
  /** ISO 8601, UTC, milliseconds. */
  createdAt: string;
  updatedAt: string;
}

const COLUMNS = {
  id: 'id',
  creatorAddress: 'creator_address',
  creatorDstAddress: 'creator_dst_address',
  routeId: 'route_id',
  adTokenId: 'ad_token_id',
  orderTokenId: 'order_token_id',
  adChainId: 'ad_chain_id',
  orderChainId: 'order_chain_id',
  poolAmount: 'pool_amount',
  availableAmount: 'available_amount',
  reservedAmount: 'reserved_amount',
  lockedAmount: 'locked_amount',
  minAmount: 'min_amount',
  maxAmount: 'max_amount',
  status: 'status',
  metadata: 'metadata',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
} as const satisfies Record<Exclude<keyof AdRecord, 'heldAmount'>, string>;

const TIMESTAMPS = new Set(['created_at', 'updated_at']);

/**
 * The select list, as one fixed SQL fragment (compiled once, not per request). Timestamps are
 * formatted and the held amount summed by PostgreSQL: a page of 25 ads would otherwise parse 50
 * dates and 50 big integers in JavaScript only to print them again.
 */
const SELECT_SQL = [
  ...Object.entries(COLUMNS).map(([as, column]) =>
    `${TIMESTAMPS.has(column) ? isoTimestamp(`ads.${column}`) : `ads.${column}`} AS "${as}"`),
  'ads.locked_amount + ads.reserved_amount AS "heldAmount"',
].join(', ');
const selectList = (knex: Knex) => knex.raw(SELECT_SQL);

export interface AdFilter {
  routeId?: string;
  creatorAddress?: string;
  adChainId?: string;
  orderChainId?: string;
  adTokenId?: string;
  orderTokenId?: string;
  status?: AdStatus;
}

/**
 * Ads matching every given filter, newest first, one page. Without a status filter only
 * published ads are listed: PENDING ones (create not yet confirmed on chain) stay out of sight.
 */
export async function listAds(knex: Knex, filter: AdFilter, limit: number, cursor?: string) {
  const query = knex('ads').select(selectList(knex));
  for (const key of ['routeId', 'creatorAddress', 'adChainId', 'orderChainId', 'adTokenId', 'orderTokenId', 'status'] as const) {
    const value = filter[key];
    if (value !== undefined) query.where(`ads.${COLUMNS[key]}`, value);
  }
  if (filter.status === undefined) query.whereIn('ads.status', [...LISTED_AD_STATUSES]);
  const { rows, nextCursor } = toPage<AdRecord & { cursor_created_at: string }>(await runPrepared(knex, paginate(query, 'ads', limit, cursor)), limit);
  return { items: rows as AdRecord[], nextCursor };
}

/** One ad by id, or undefined. */
export async function findAd(knex: Knex, id: string): Promise<AdRecord | undefined> {
  const [ad] = await runPrepared<AdRecord>(knex, knex('ads').select(selectList(knex)).where('ads.id', id));
  return ad;
}
