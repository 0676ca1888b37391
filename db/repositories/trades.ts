import type { TransactionSender } from '../../domain/trade-steps.ts';
import type { Knex } from 'knex';
import { pageSql, parameters, toPage, type Page, type RowVersion } from '../pagination.ts';
import { runStatement, statement, statementCache } from '../prepared.ts';
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
  /** Identifies this version of the row (updated_at in microseconds and the writing transaction): for ETags. */
  version: string;
  /** The EIP-712 order hash every signed step and the proof carry (0x, lower-case hex); the column is nullable (older rows). */
  orderHash: string | null;
  /** The trade's verified chain events (chain_events), in the order they were applied. */
  transactions: TradeTransaction[];
}

/** One verified event of a trade: where, in which transaction, which contract event. */
export interface TradeTransaction {
  chainId: string;
  txHash: string;
  event: string;
  /** Who sent it; null when nobody reported it (the audit found it). */
  sentBy?: TransactionSender | null;
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
  orderHash: 'order_hash',
} as const satisfies Record<Exclude<keyof TradeRecord, 'version' | 'transactions'>, string>;

const TIMESTAMPS = new Set(['created_at', 'updated_at']);

/** The select list as one fixed SQL fragment; timestamps come formatted from PostgreSQL (see ads.ts). */
const VERSION_SQL = `trades.updated_at::text || '/' || trades.xmin::text`;
const VERSION_SELECT = `trades.id, ${VERSION_SQL} AS "version"`;
// A trade's chain events change only with the trade row (the applier records them in the
// transaction that saves the trade's state; a keeper refund touches the row), so the row version covers them.
const TRANSACTIONS_SQL = `(SELECT coalesce(json_agg(json_build_object(
    'chainId', ce.chain_id, 'txHash', ce.tx_hash, 'event', ce.event, 'sentBy', ce.sent_by) ORDER BY ce.id), '[]')
  FROM chain_events ce WHERE ce.subject_kind = 'trade' AND ce.subject_id = trades.id)`;
const SELECT_SQL = Object.entries(COLUMNS)
  .map(([as, column]) => `${TIMESTAMPS.has(column) ? isoTimestamp(`trades.${column}`) : `trades.${column}`} AS "${as}"`)
  .concat(`${VERSION_SQL} AS "version"`, `${TRANSACTIONS_SQL} AS "transactions"`)
  .join(', ');

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
  /** The order hash, 0x and lower-case hex. */
  orderHash?: string;
  /** Any verified transaction of the trade: 64 lower-case hex digits, without 0x (both spellings are looked up). */
  txHash?: string;
  /** Only trades in one of these statuses. */
  status?: readonly TradeStatus[];
}

const FILTER_KEYS = ['routeId', 'adId', 'adCreatorAddress', 'bridgerAddress', 'adTokenId', 'orderTokenId'] as const;
const listStatements = statementCache();
const findStatement = statement(`select ${SELECT_SQL} from trades where trades.id = $1`);

/** The WHERE conditions of a list, their values given to `param`. */
function listConditions(param: (value: unknown) => string, filter: TradeFilter): string[] {
  const conditions: string[] = [];
  for (const key of FILTER_KEYS) {
    const value = filter[key];
    if (value !== undefined) conditions.push(`trades.${COLUMNS[key]} = ${param(value)}`);
  }
  // Compared as numeric in SQL: amounts beyond 2^53 stay exact.
  if (filter.minAmount !== undefined) conditions.push(`trades.amount >= ${param(filter.minAmount)}::numeric`);
  if (filter.maxAmount !== undefined) conditions.push(`trades.amount <= ${param(filter.maxAmount)}::numeric`);
  if (filter.orderHash !== undefined) conditions.push(`trades.order_hash = ${param(filter.orderHash)}`);
  if (filter.status !== undefined) conditions.push(`trades.status = ANY (${param([...filter.status])}::text[])`);
  // EVM hashes are stored 0x-prefixed, Stellar ones bare (chains/tx-hash.ts): both spellings. The
  // ids are read first (one InitPlan over chain_events_trade_tx_idx), then the trades by primary key.
  if (filter.txHash !== undefined) {
    conditions.push(`trades.id = ANY (ARRAY(SELECT ce.subject_id FROM chain_events ce WHERE ce.subject_kind = ` +
      `'trade' AND ce.tx_hash IN (${param(`0x${filter.txHash}`)}, ${param(filter.txHash)})))`);
  }
  return conditions;
}

/** Trades matching every given filter, newest first, one page (SQL per shape, prepared once: see ads.ts). */
export async function listTrades(knex: Knex, filter: TradeFilter, limit: number, cursor?: string): Promise<Page<TradeRecord>> {
  const { values, param } = parameters();
  const text = pageSql('trades', SELECT_SQL, listConditions(param, filter), param, limit, cursor);
  return toPage(await runStatement<TradeRecord & { cursor_created_at: string }>(knex, listStatements(text), values), limit, 'trades');
}

/** The ids and row versions of the page `listTrades` would answer, without the rows (see `listAdVersions`). */
export async function listTradeVersions(knex: Knex, filter: TradeFilter, limit: number, cursor?: string): Promise<Page<RowVersion>> {
  const { values, param } = parameters();
  const text = pageSql('trades', VERSION_SELECT, listConditions(param, filter), param, limit, cursor);
  return toPage(await runStatement<RowVersion & { cursor_created_at: string }>(knex, listStatements(text), values), limit, 'trades');
}

/** One trade by id, or undefined. */
export async function findTrade(knex: Knex, id: string): Promise<TradeRecord | undefined> {
  const [trade] = await runStatement<TradeRecord>(knex, findStatement, [id]);
  return trade;
}
