import type { Knex } from 'knex';
import type { TradeStatus } from '../../domain/index.ts';

/**
 * The reads a Bridger recovers a lost create answer by: the deposit request kept with its trade,
 * and the caller's own trades still awaiting their deposit.
 */

/** The signed deposit call data as create answered it (`reqContractDetails`); `deadline` is unix seconds. */
export interface DepositRequestRecord {
  deadline: string;
  [field: string]: unknown;
}

/** The deposit request kept with trade `tradeId`: null when none was kept (created before they were), undefined when no such trade. */
export async function keptDepositRequest(knex: Knex, tradeId: string): Promise<DepositRequestRecord | null | undefined> {
  const row = await knex('trades').select('deposit_request as depositRequest').where({ id: tradeId }).first();
  return row === undefined ? undefined : (row.depositRequest as DepositRequestRecord | null);
}

/** A trade awaiting its deposit, as the lookup by deposit transaction needs it. */
export interface AwaitedDeposit {
  id: string;
  orderChainId: string;
  orderHash: string;
  status: TradeStatus;
}

/**
 * The PENDING trades whose Bridger is one of `wallets`, newest first, at most `limit` (a wallet
 * holds at most MAX_OPEN_RESERVATIONS_PER_WALLET of them), from the Bridger index.
 */
export async function awaitedDeposits(knex: Knex, wallets: readonly string[], limit: number): Promise<AwaitedDeposit[]> {
  if (wallets.length === 0) return [];
  return knex('trades')
    .select('id', 'order_chain_id as orderChainId', 'order_hash as orderHash', 'status')
    .where('status', 'PENDING')
    .whereIn('bridger_address', wallets)
    .whereNotNull('order_hash')
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(limit);
}
