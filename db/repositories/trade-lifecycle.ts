import type { Knex } from 'knex';
import { idPage, type IdPage, type IdPageResult } from '../pagination.ts';
import type { ChainEventRecord } from './chain-events.ts';
import type { DepositRequestRecord } from './deposit-requests.ts';
import { OPEN_TRADE_STATUSES, orderParamsFromStored, type OrderParams, type TradeStatus } from '../../domain/index.ts';

/**
 * The trade as its lifecycle sees it (trades.ts holds the read model the API lists): the order,
 * the secret, the state the machine works on, the deposit's leaf and the proof.
 */
export interface TradeLifecycleRecord {
  id: string;
  adId: string;
  routeId: string;
  adChainId: string;
  orderChainId: string;
  adCreatorAddress: string;
  bridgerAddress: string;
  amount: string;
  status: TradeStatus;
  proofState: 'none' | 'running' | 'ready';
  bridgerClaimed: boolean;
  adCreatorClaimed: boolean;
  orderParams: OrderParams;
  orderHash: string;
  secret: string;
  secretCommitment: string;
  reservationExpiresAt: Date;
  lockDeadline: Date;
  leafIndex: number | null;
  leaf: string | null;
  proof: StoredProof | null;
}

export interface StoredProof {
  proof: unknown;
  publicSignals: string[];
  nullifierHash: string;
  targetRoot: string;
}

const SELECT = [
  'id', 'ad_id as adId', 'route_id as routeId', 'ad_chain_id as adChainId', 'order_chain_id as orderChainId',
  'ad_creator_address as adCreatorAddress', 'bridger_address as bridgerAddress', 'amount', 'status', 'proof_state as proofState',
  'bridger_claimed as bridgerClaimed', 'ad_creator_claimed as adCreatorClaimed', 'order_params as orderParams', 'order_hash as orderHash',
  'secret', 'secret_commitment as secretCommitment', 'reservation_expires_at as reservationExpiresAt', 'lock_deadline as lockDeadline',
  'leaf_index as leafIndex', 'leaf', 'proof',
];

// Every read goes through here: an order stored in the shape before route pricing (a pod of the
// previous release writes it during a rollout, after the migration's backfill) gets its amounts.
function read(row: TradeLifecycleRecord): TradeLifecycleRecord;
function read(row: TradeLifecycleRecord | undefined): TradeLifecycleRecord | undefined;
function read(row: TradeLifecycleRecord | undefined): TradeLifecycleRecord | undefined {
  return row && orderParamsFromStored(row);
}

export interface NewTrade {
  id: string;
  routeId: string;
  adId: string;
  adCreatorAddress: string;
  bridgerAddress: string;
  bridgerDstAddress: string;
  adChainId: string;
  orderChainId: string;
  adTokenId: string;
  orderTokenId: string;
  amount: string;
  orderParams: OrderParams;
  orderHash: string;
  secret: string;
  secretCommitment: string;
  reservationExpiresAt: Date;
  lockDeadline: Date;
  /** The deposit request as create answers it (db/repositories/deposit-requests.ts reads it back). */
  depositRequest: DepositRequestRecord;
}

export async function insertTrade(trx: Knex.Transaction, trade: NewTrade): Promise<void> {
  await trx('trades').insert({
    id: trade.id,
    route_id: trade.routeId,
    ad_id: trade.adId,
    ad_creator_address: trade.adCreatorAddress,
    bridger_address: trade.bridgerAddress,
    bridger_dst_address: trade.bridgerDstAddress,
    ad_chain_id: trade.adChainId,
    order_chain_id: trade.orderChainId,
    ad_token_id: trade.adTokenId,
    order_token_id: trade.orderTokenId,
    amount: trade.amount,
    order_params: JSON.stringify(trade.orderParams),
    order_hash: trade.orderHash,
    secret: trade.secret,
    secret_commitment: trade.secretCommitment,
    reservation_expires_at: trade.reservationExpiresAt,
    lock_deadline: trade.lockDeadline,
    deposit_request: JSON.stringify(trade.depositRequest),
  });
}

/** One trade's lifecycle view, or undefined. */
export async function findTradeLifecycle(knex: Knex, id: string): Promise<TradeLifecycleRecord | undefined> {
  return read(await knex('trades').select(SELECT).where({ id }).first());
}

/** Where a recorded chain event sits on its chain. */
export interface RecordedBlock { block: string; blockHash: string }

/**
 * One trade's lifecycle view with its recorded deposit (its `event` on the trade's order chain:
 * block and block hash, null before one is recorded), in one statement: what a request that signs
 * on the deposit reads.
 */
export async function findTradeWithDeposit(
  knex: Knex, id: string, event: string,
): Promise<(TradeLifecycleRecord & { deposit: RecordedBlock | null }) | undefined> {
  const deposit = knex.raw(
    `(SELECT json_build_object('block', e.block::text, 'blockHash', e.block_hash) FROM chain_events e
      WHERE e.subject_kind = 'trade' AND e.subject_id = t.id AND e.chain_id = t.order_chain_id AND e.event = ? LIMIT 1) AS deposit`,
    [event],
  );
  const row = await knex('trades as t').select([...SELECT.map((column) => `t.${column}`), deposit]).where('t.id', id).first();
  return row && { ...read(row), deposit: row.deposit ?? null };
}

/**
 * One trade's lifecycle view with the chain events recorded for it in a transaction spelled one of
 * `txHashes` (canonical spellings, hex) on either of its chains, ordered by chain, transaction and log
 * index, in one statement (one snapshot): what a confirmation reads.
 */
export async function findTradeWithRecordedEvents(
  knex: Knex, id: string, txHashes: readonly string[],
): Promise<(TradeLifecycleRecord & { recorded: ChainEventRecord[] }) | undefined> {
  for (const hash of txHashes) if (!/^(0x)?[0-9a-f]+$/.test(hash)) throw new RangeError(`txHashes must be lower-case hex, received '${hash}'`);
  const recorded = knex.raw(
    `(SELECT coalesce(json_agg(json_build_object(
         'chainId', e.chain_id, 'txHash', e.tx_hash, 'logIndex', e.log_index, 'block', e.block, 'blockHash', e.block_hash,
         'event', e.event, 'subjectKind', e.subject_kind, 'subjectId', e.subject_id) ORDER BY e.chain_id, e.tx_hash, e.log_index), '[]'::json)
        FROM chain_events e
       WHERE e.subject_kind = 'trade' AND e.subject_id = t.id AND e.chain_id IN (t.order_chain_id, t.ad_chain_id)
         AND e.tx_hash = ANY(?::text[])) AS recorded`,
    [`{${txHashes.join(',')}}`],
  );
  const row = await knex('trades as t').select([...SELECT.map((column) => `t.${column}`), recorded]).where('t.id', id).first();
  return row && { ...read(row), recorded: row.recorded as ChainEventRecord[] };
}

/**
 * One trade's lifecycle view with the seconds since its `event` (its deposit) was recorded, by the
 * database's clock (null before one is recorded), in one statement: what the prove step reads.
 */
export async function findTradeWithDepositAge(
  knex: Knex, id: string, event: string,
): Promise<(TradeLifecycleRecord & { depositAgeSeconds: number | null }) | undefined> {
  const age = knex.raw(
    `(SELECT extract(epoch FROM now() - min(e.created_at))::float8 FROM chain_events e
      WHERE e.subject_kind = 'trade' AND e.subject_id = t.id AND e.event = ?) AS deposit_age_seconds`,
    [event],
  );
  const row = await knex('trades as t').select([...SELECT.map((column) => `t.${column}`), age]).where('t.id', id).first();
  if (!row) return undefined;
  const { deposit_age_seconds: seconds, ...trade } = row;
  return { ...read(trade), depositAgeSeconds: seconds ?? null };
}

/** The same, locked for the rest of `trx`: every state change goes through it. */
export async function lockTrade(trx: Knex.Transaction, id: string): Promise<TradeLifecycleRecord | undefined> {
  return read(await trx('trades').select(SELECT).where({ id }).forUpdate().first());
}

/** The machine's part of a trade row, as written. */
export interface StoredTradeState { status: TradeStatus; proofState: string; bridgerClaimed: boolean; adCreatorClaimed: boolean }

/** What a state write may carry beside the state: the deposit's leaf when first known, the proof when it is ready. */
export interface StateExtras {
  leaf?: { index: number; leaf: string };
  proof?: StoredProof;
}

/**
 * Writes the machine's state (and the deposit's leaf, the proof) of a trade locked in `trx`, or,
 * given `expected`, of a trade read without a lock: then only if its state is still `expected`
 * (compare and set: the UPDATE takes the row lock), and answers whether it was. One statement.
 */
export async function saveTradeState(
  trx: Knex.Transaction,
  id: string,
  state: StoredTradeState,
  extras: StateExtras = {},
  expected?: StoredTradeState,
): Promise<boolean> {
  const query = trx('trades').where({ id });
  if (expected) {
    query.where({
      status: expected.status, proof_state: expected.proofState, bridger_claimed: expected.bridgerClaimed, ad_creator_claimed: expected.adCreatorClaimed,
    });
  }
  const updated = await query.update({
    status: state.status,
    proof_state: state.proofState,
    bridger_claimed: state.bridgerClaimed,
    ad_creator_claimed: state.adCreatorClaimed,
    ...(extras.leaf ? { leaf_index: extras.leaf.index, leaf: extras.leaf.leaf } : {}),
    ...(extras.proof ? { proof: JSON.stringify(extras.proof) } : {}),
    updated_at: trx.fn.now(),
  });
  return updated === 1;
}

/** Stores the verified proof once; a second writer (a retried or duplicated proof job) changes nothing. */
/**
 * Within a transaction that records one more of the trade's chain events without moving its state
 * (the keeper's refund of an ended trade): the row's version moves, so every cached representation
 * of the trade (its transactions among them) is read again.
 */
export async function touchTrade(trx: Knex.Transaction, id: string): Promise<void> {
  await trx('trades').where({ id }).update({ updated_at: trx.fn.now() });
}

export async function storeProof(knex: Knex, id: string, proof: StoredProof): Promise<void> {
  await knex('trades').where({ id }).whereNull('proof').update({ proof: JSON.stringify(proof), updated_at: knex.fn.now() });
}

/** Trades not yet settled or expired, for an orchestrator resuming after a restart. */
export async function openTrades(knex: Knex): Promise<TradeLifecycleRecord[]> {
  return (await knex('trades').select(SELECT).whereIn('status', OPEN_TRADE_STATUSES)).map((row) => orderParamsFromStored(row));
}

/** One page (id order, after `page.after`) of the open trades, and how many follow it: the books audit's sweep. */
export async function openTradesPage(knex: Knex, page: IdPage): Promise<IdPageResult<TradeLifecycleRecord>> {
  const result = await idPage<TradeLifecycleRecord>(() => knex('trades').select(SELECT).whereIn('status', OPEN_TRADE_STATUSES), page);
  return { ...result, rows: result.rows.map((row) => orderParamsFromStored(row)) };
}
