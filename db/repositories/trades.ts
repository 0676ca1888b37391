import type { Knex } from 'knex';
import { paginate, toPage } from '../pagination.ts';
import { runPrepared } from '../prepared.ts';
import { isoTimestamp } from '../sql.ts';
import type { TradeStatus } from '../../domain/index.ts';


/** A trade as stored. `amount` is a decimal string (numeric(78,0)). */
export interface TradeRecord {
  id: string;
  routeId: string;
  adId: string;
  adCreatorAddress: string;
  adChainId: string;
  orderChainId: string;
  bridgerAddress: string;
  bridgerDstAddress: string;
  adTokenId: string;
  orderTokenId: string;
  amount: string;
  status: TradeStatus;
  adCreatorClaimed: boolean;
  bridgerClaimed: boolean;
  /** ISO 8601, UTC, milliseconds. */
  createdAt: string;
  updatedAt: string;
}

const COLUMNS = {
  id: 'id',
  routeId: 'route_id',
  adId: 'ad_id',
  adCreatorAddress: 'ad_creator_address',
  adChainId: 'ad_chain_id',
  orderChainId: 'order_chain_id',
  bridgerAddress: 'bridger_address',
  bridgerDstAddress: 'bridger_dst_address',
  adTokenId: 'ad_token_id',
  orderTokenId: 'order_token_id',
  amount: 'amount',
  status: 'status',
  adCreatorClaimed: 'ad_creator_claimed',
  bridgerClaimed: 'bridger_claimed',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
} as const satisfies Record<keyof TradeRecord, string>;

const TIMESTAMPS = new Set(['created_at', 'updated_at']);

/** The select list as one fixed SQL fragment; timestamps come formatted from PostgreSQL (see ads.ts). */
const SELECT_SQL = Object.entries(COLUMNS)
  .map(([as, column]) => `${TIMESTAMPS.has(column) ? isoTimestamp(`trades.${column}`) : `trades.${column}`} AS "${as}"`)
  .join(', ');
const selectList = (knex: Knex) => knex.raw(SELECT_SQL);

export interface TradeFilter {
  routeId?: string;
  adId?: string;
  adCreatorAddress?: string;
  bridgerAddress?: string;
  adTokenId?: string;
  orderTokenId?: string;
  /** Inclusive bounds on the amount, decimal strings. */
  minAmount?: string;
  maxAmount?: string;
}

/** Trades matching every given filter, newest first, one page. */
export async function listTrades(knex: Knex, filter: TradeFilter, limit: number, cursor?: string) {
  const query = knex('trades').select(selectList(knex));
  for (const key of ['routeId', 'adId', 'adCreatorAddress', 'bridgerAddress', 'adTokenId', 'orderTokenId'] as const) {
    const value = filter[key];
    if (value !== undefined) query.where(`trades.${COLUMNS[key]}`, value);
  }
  // Compared as numeric in SQL: amounts beyond 2^53 stay exact.
  if (filter.minAmount !== undefined) query.whereRaw('trades.amount >= ?::numeric', [filter.minAmount]);
  if (filter.maxAmount !== undefined) query.whereRaw('trades.amount <= ?::numeric', [filter.maxAmount]);
  const { rows, nextCursor } = toPage<TradeRecord & { cursor_created_at: string }>(await runPrepared(knex, paginate(query, 'trades', limit, cursor)), limit);
  return { items: rows as TradeRecord[], nextCursor };
}

/** One trade by id, or undefined. */
export async function findTrade(knex: Knex, id: string): Promise<TradeRecord | undefined> {
  const [trade] = await runPrepared<TradeRecord>(knex, knex('trades').select(selectList(knex)).where('trades.id', id));
  return trade;
}
