import type { Knex } from 'knex';
import { pageStatements, parameters, toPage, type Page, type RowVersion } from '../pagination.ts';
import { runStatement, statement } from '../prepared.ts';
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
  /** What left the pool: withdrawals, the close payout, unlocks paid to Bridgers. */
  paidOutAmount: string;
  /** Held by withdraw and close requests not yet confirmed or expired. */
  withdrawingAmount: string;
  /** reserved + locked: everything held for trades in progress (the management view's "locked"). */
  heldAmount: string;
  minAmount: string | null;
  maxAmount: string | null;
  status: AdStatus;
  /** What the Maker or the lifecycle set (never EXHAUSTED, which `status` derives from balances). */
  baseStatus: 'PENDING' | 'ACTIVE' | 'PAUSED' | 'CLOSED';
  metadata: unknown;
  /** ISO 8601, UTC, milliseconds. */
  createdAt: string;
  updatedAt: string;
  /** Identifies this version of the row (updated_at in microseconds and the writing transaction): for ETags. */
  version: string;
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
  paidOutAmount: 'paid_out_amount',
  withdrawingAmount: 'withdrawing_amount',
  minAmount: 'min_amount',
  maxAmount: 'max_amount',
  status: 'status',
  baseStatus: 'base_status',
  metadata: 'metadata',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
} as const satisfies Record<Exclude<keyof AdRecord, 'heldAmount' | 'version'>, string>;

/** `AdRecord.version`: changes with every write to the row, even two in the same millisecond. */
const VERSION_SQL = `ads.updated_at::text || '/' || ads.xmin::text`;
const VERSION_SELECT = `ads.id, ${VERSION_SQL} AS "version"`;

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
  `${VERSION_SQL} AS "version"`,
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

const FILTER_KEYS = ['routeId', 'creatorAddress', 'adChainId', 'orderChainId', 'adTokenId', 'orderTokenId', 'status'] as const;
// Fixed strings from the domain, written into the SQL: they are part of the query's shape.
const LISTED = `ads.status in (${LISTED_AD_STATUSES.map((status) => `'${status}'`).join(', ')})`;
const pageStatement = pageStatements('ads', SELECT_SQL);
const versionsStatement = pageStatements('ads', VERSION_SELECT);
const findStatement = statement(`select ${SELECT_SQL} from ads where ads.id = $1`);

/** The WHERE conditions of a list, their values given to `param`. */
function listConditions(param: (value: unknown) => string, filter: AdFilter, creators?: string[]): string[] {
  const conditions: string[] = [];
  // The caller decides who sees what (ads/queries.ts): given `creators`, only their ads.
  if (creators !== undefined) conditions.push(creators.length > 0 ? `ads.creator_address in (${creators.map(param).join(', ')})` : 'false');
  for (const key of FILTER_KEYS) {
    const value = filter[key];
    if (value !== undefined) conditions.push(`ads.${COLUMNS[key]} = ${param(value)}`);
  }
  if (filter.status === undefined) conditions.push(LISTED);
  return conditions;
}

/**
 * Ads matching every given filter, newest first, one page. Without a status filter only
 * published ads are listed: PENDING ones (create not yet confirmed on chain) stay out of sight.
 * `creators` restricts the page to ads of these creator addresses.
 */
export async function listAds(knex: Knex, filter: AdFilter, limit: number, cursor?: string, creators?: string[]): Promise<Page<AdRecord>> {
  // SQL written per query shape and prepared once per shape: the query builder cost more per
  // request than PostgreSQL spends executing the page.
  const { values, param } = parameters();
  const query = pageStatement(listConditions(param, filter, creators), param, limit, cursor);
  return toPage(await runStatement<AdRecord & { cursor_created_at: string }>(knex, query, values), limit, 'ads');
}

/**
 * The ids and row versions of the page `listAds` would answer, without the rows: what a reader
 * needs to know whether the representations it already has are current (see `api/presented-rows.ts`).
 * About a fifth of the full page's cost in PostgreSQL and in the pg driver.
 */
export async function listAdVersions(knex: Knex, filter: AdFilter, limit: number, cursor?: string, creators?: string[]): Promise<Page<RowVersion>> {
  const { values, param } = parameters();
  const query = versionsStatement(listConditions(param, filter, creators), param, limit, cursor);
  return toPage(await runStatement<RowVersion & { cursor_created_at: string }>(knex, query, values), limit, 'ads');
}

/** One ad by id, or undefined. */
export async function findAd(knex: Knex, id: string): Promise<AdRecord | undefined> {
  const [ad] = await runStatement<AdRecord>(knex, findStatement, [id]);
  return ad;
}

/** The columns a new ad starts with; balances start at zero and status PENDING until its create is confirmed. */
export interface NewAd {
  id: string;
  creatorAddress: string;
  creatorDstAddress: string;
  routeId: string;
  adTokenId: string;
  orderTokenId: string;
  adChainId: string;
  orderChainId: string;
  minAmount: string | null;
  maxAmount: string | null;
  metadata: unknown;
}

export async function insertAd(trx: Knex.Transaction, ad: NewAd): Promise<void> {
  await trx('ads').insert({
    id: ad.id,
    creator_address: ad.creatorAddress,
    creator_dst_address: ad.creatorDstAddress,
    route_id: ad.routeId,
    ad_token_id: ad.adTokenId,
    order_token_id: ad.orderTokenId,
    ad_chain_id: ad.adChainId,
    order_chain_id: ad.orderChainId,
    min_amount: ad.minAmount,
    max_amount: ad.maxAmount,
    metadata: ad.metadata === undefined || ad.metadata === null ? null : JSON.stringify(ad.metadata),
    base_status: 'PENDING',
  });
}

/** An ad's balance columns as bigint: what ads/ledger.ts computes (its `AdBalances`). */
export interface AdBalanceColumns {
  pool: bigint;
  reserved: bigint;
  locked: bigint;
  withdrawing: bigint;
  paidOut: bigint;
}

/** What a change writes to a locked ad: its new balances (from the ad ledger) and settings. */
export interface AdChange {
  balances?: AdBalanceColumns;
  set?: { baseStatus?: NewBaseStatus; minAmount?: string | null; maxAmount?: string | null; metadata?: unknown };
}

const BALANCE_COLUMNS = {
  pool: ['pool_amount', 'poolAmount'], paidOut: ['paid_out_amount', 'paidOutAmount'], reserved: ['reserved_amount', 'reservedAmount'],
  locked: ['locked_amount', 'lockedAmount'], withdrawing: ['withdrawing_amount', 'withdrawingAmount'],
} as const satisfies Record<keyof AdBalanceColumns, [string, keyof AdRecord]>;

/**
 * The one way an ad row changes. Locks the row (SELECT ... FOR UPDATE, once), hands it to
 * `decide`, which may read and write other rows in `trx` and throws to refuse, then writes the
 * change it returns in one UPDATE (only the columns that differ; nothing when nothing does) and
 * returns the row as it now stands. Undefined, with `decide` not called, when there is no such ad.
 * The table's CHECK constraints refuse any balance below zero, so a wrong change fails loudly
 * instead of corrupting a balance.
 */
export async function changeLockedAd(
  trx: Knex.Transaction,
  id: string,
  decide: (ad: AdRecord) => AdChange | Promise<AdChange>,
): Promise<AdRecord | undefined> {
  const ad: AdRecord | undefined = await trx('ads').select(selectList(trx)).where('ads.id', id).forUpdate().first();
  if (!ad) return undefined;
  const { balances, set = {} } = await decide(ad);
  const update: Record<string, unknown> = {};
  if (balances) {
    for (const [key, [column, field]] of Object.entries(BALANCE_COLUMNS) as [keyof AdBalanceColumns, [string, keyof AdRecord]][]) {
      if (balances[key] !== BigInt(ad[field] as string)) update[column] = balances[key].toString();
    }
  }
  if (set.baseStatus !== undefined && set.baseStatus !== ad.baseStatus) update.base_status = set.baseStatus;
  if (set.minAmount !== undefined) update.min_amount = set.minAmount;
  if (set.maxAmount !== undefined) update.max_amount = set.maxAmount;
  // null clears the metadata (SQL NULL, presented as null), anything else is stored as given.
  if (set.metadata !== undefined) update.metadata = set.metadata === null ? null : JSON.stringify(set.metadata);
  if (Object.keys(update).length === 0) return ad;
  const [written] = await trx('ads').where({ id }).update({ ...update, updated_at: trx.fn.now() }, [selectList(trx) as unknown as string]);
  return written as AdRecord;
}

export type NewBaseStatus = AdRecord['baseStatus'];
