import type { TransactionSender } from '../../domain/trade-steps.ts';
import type { Knex } from 'knex';

/** A verified contract event as recorded (chains/verify.ts VerifiedAction, plus what it answered). */
export interface ChainEventRecord {
  chainId: string;
  txHash: string;
  logIndex: number;
  block: string;
  blockHash: string;
  event: string;
  subjectKind: 'ad_request' | 'trade';
  subjectId: string;
  /** A trade's transaction: who sent it (the reporting party, or the relayer's keeper); unset when nobody reported it. */
  sentBy?: TransactionSender;
}

/** Raised when the event is already recorded as the answer to something else. */
export class ChainEventTakenError extends Error {}

/**
 * Records `event` inside the caller's transaction. The unique key (chain, tx, log index) makes
 * one event answer one subject: recording it for the same subject again is a no-op, for another
 * subject throws `ChainEventTakenError`.
 */
export async function recordChainEvent(trx: Knex.Transaction, event: ChainEventRecord): Promise<void> {
  const inserted = await trx('chain_events')
    .insert({
      chain_id: event.chainId,
      tx_hash: event.txHash,
      log_index: event.logIndex,
      block: event.block,
      block_hash: event.blockHash,
      event: event.event,
      subject_kind: event.subjectKind,
      subject_id: event.subjectId,
      sent_by: event.sentBy ?? null,
    })
    .onConflict(['chain_id', 'tx_hash', 'log_index'])
    .ignore()
    .returning('id');
  if (inserted.length > 0) return;
  const existing = await trx('chain_events')
    .where({ chain_id: event.chainId, tx_hash: event.txHash, log_index: event.logIndex })
    .first('subject_kind', 'subject_id');
  if (existing.subject_kind !== event.subjectKind || existing.subject_id !== event.subjectId) {
    throw new ChainEventTakenError(`event ${event.txHash}#${event.logIndex} on chain ${event.chainId} already answered another request`);
  }
}

/**
 * The events recorded for one subject in any of `transactions` (each a transaction on a chain), in
 * one query, ordered by chain, transaction and log index. A transaction may carry events of several
 * subjects: each is recorded under its own log index.
 */
export async function findSubjectEventsInTransactions(
  knex: Knex, subjectKind: ChainEventRecord['subjectKind'], subjectId: string, transactions: readonly { chainId: string; txHash: string }[],
): Promise<ChainEventRecord[]> {
  if (transactions.length === 0) return [];
  const rows = await knex('chain_events')
    .where({ subject_kind: subjectKind, subject_id: subjectId })
    .whereIn(['chain_id', 'tx_hash'], transactions.map((t) => [t.chainId, t.txHash]))
    .orderBy(['chain_id', 'tx_hash', 'log_index']);
  return rows.map(toRecord);
}

/** The recorded `event` that answered a subject on a chain, if any. */
export async function findSubjectEvent(
  knex: Knex, subjectKind: ChainEventRecord['subjectKind'], subjectId: string, chainId: string, event: string,
): Promise<ChainEventRecord | undefined> {
  const row = await knex('chain_events').where({ subject_kind: subjectKind, subject_id: subjectId, chain_id: chainId, event }).first();
  if (!row) return undefined;
  return toRecord(row);
}

function toRecord(row: Record<string, any>): ChainEventRecord {
  return {
    chainId: row.chain_id, txHash: row.tx_hash, logIndex: row.log_index, block: row.block, blockHash: row.block_hash,
    event: row.event, subjectKind: row.subject_kind, subjectId: row.subject_id,
  };
}
