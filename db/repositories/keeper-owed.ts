import type { Knex } from 'knex';

/**
 * The keeper's outbox before and after the senders: what the trade machine says is owed (rows
 * `owed`, written in the trade's own transaction), turned into a call (`queued`) once its time has
 * come on its chain, dropped when no longer owed (`cancelled`) or too late (`expired`), and handed
 * back to the trade once final (`reported_at`).
 */

/** A duty as the outbox keys it. */
export interface OwedDuty {
  action: string;
  side: string;
}

/** What the machine decided is owed, with its window on the target chain (unix seconds). */
export interface OwedSendInput extends OwedDuty {
  tradeId: string;
  chainId: string;
  notBefore: bigint;
  notAfter: bigint | null;
}

/** An owed row as the preparing pass reads it. */
export interface OwedSendRow extends OwedSendInput {
  id: string;
  dueChainTime: bigint | null;
  delaySeconds: number;
}

/** A final send not yet handed to its trade. */
export interface FinishedSendRow {
  id: string;
  tradeId: string;
  chainId: string;
  action: string;
  side: string;
  status: 'confirmed' | 'reverted';
  txHash: string | null;
}

/** Within the trade's transaction: records `rows` as owed, each business key (trade, action, side) at most once, ever. */
export async function recordOwedKeeperSends(trx: Knex.Transaction, rows: readonly OwedSendInput[]): Promise<void> {
  if (rows.length === 0) return;
  await trx('keeper_sends')
    .insert(rows.map((row) => ({
      trade_id: row.tradeId, chain_id: row.chainId, action: row.action, side: row.side, status: 'owed',
      not_before: row.notBefore.toString(), not_after: row.notAfter?.toString() ?? null,
    })))
    .onConflict(['trade_id', 'action', 'side']).ignore();
}

/**
 * Within the trade's transaction: every send of the trade not yet signed (owed or queued) that
 * `stillOwed` rejects becomes `cancelled`; one already broadcast is left to its sender (the chain
 * refuses a second unlock, and its outcome is recorded either way). Returns how many were cancelled.
 */
export async function cancelKeeperSendsNoLongerOwed(trx: Knex.Transaction, tradeId: string, stillOwed: (duty: OwedDuty) => boolean): Promise<number> {
  const open: (OwedDuty & { id: string })[] = await trx('keeper_sends').where({ trade_id: tradeId }).whereIn('status', ['owed', 'queued'])
    .select('id', 'action', 'side');
  const gone = open.filter((row) => !stillOwed(row)).map((row) => row.id);
  if (gone.length === 0) return 0;
  return trx('keeper_sends').whereIn('id', gone).whereIn('status', ['owed', 'queued'])
    .update({ status: 'cancelled', finished_at: trx.fn.now() });
}

/** The owed sends, oldest first, at most `limit`, after the send `afterId` when given (keyset paging). */
export async function owedKeeperSends(knex: Knex, limit: number, afterId?: string): Promise<OwedSendRow[]> {
  const query = knex('keeper_sends').where({ status: 'owed' }).orderBy('id').limit(limit);
  if (afterId !== undefined) query.andWhere('id', '>', afterId);
  const rows = await query;
  return rows.map((row) => ({
    id: String(row.id), tradeId: row.trade_id, chainId: row.chain_id, action: row.action, side: row.side,
    notBefore: BigInt(row.not_before), notAfter: row.not_after === null ? null : BigInt(row.not_after),
    dueChainTime: row.due_chain_time === null ? null : BigInt(row.due_chain_time), delaySeconds: Number(row.delay_seconds),
  }));
}

/** Notes when an owed send was first seen due on its chain and the grace it is given from then (kept once set). */
export async function noteKeeperSendDue(knex: Knex, id: string, dueChainTime: bigint, delaySeconds: number): Promise<void> {
  await knex('keeper_sends').where({ id, status: 'owed' }).whereNull('due_chain_time')
    .update({ due_chain_time: dueChainTime.toString(), delay_seconds: delaySeconds });
}

/** An owed send given its call: queued for its chain's sender. False when it was no longer owed. */
export async function queueKeeperSend(knex: Knex, id: string, call: { to: string; data: string; value?: bigint }): Promise<boolean> {
  const updated = await knex('keeper_sends').where({ id, status: 'owed' })
    .update({ status: 'queued', to_address: call.to, call_data: call.data, value: (call.value ?? 0n).toString(), queued_at: knex.fn.now() });
  return updated === 1;
}

/** An owed or queued send ends unsent: `expired` (its window closed) or `cancelled` (no longer owed). */
export async function endUnsentKeeperSend(knex: Knex, id: string, status: 'expired' | 'cancelled', reason: string): Promise<void> {
  await knex('keeper_sends').where({ id }).whereIn('status', ['owed', 'queued'])
    .update({ status, last_error: reason.slice(0, 2_000), finished_at: knex.fn.now() });
}

/** Final sends not yet handed to their trades, oldest first. */
export async function unreportedKeeperSends(knex: Knex, limit: number): Promise<FinishedSendRow[]> {
  const rows = await knex('keeper_sends').whereIn('status', ['confirmed', 'reverted']).whereNull('reported_at').orderBy('id').limit(limit);
  return rows.map((row) => ({
    id: String(row.id), tradeId: row.trade_id, chainId: row.chain_id, action: row.action, side: row.side, status: row.status, txHash: row.tx_hash,
  }));
}

/** A final send handed to its trade. */
export async function markKeeperSendReported(knex: Knex, id: string): Promise<void> {
  await knex('keeper_sends').where({ id }).whereNull('reported_at').update({ reported_at: knex.fn.now() });
}
