import type { Knex } from 'knex';

/** One keeper account on one chain, and the sender that holds it. */
export interface KeeperFence {
  chainId: string;
  account: string;
  /** Who asks (one sender process). */
  owner: string;
  /** The fencing token this sender's lease was given; every write checks it. */
  token: string;
}

/** What is owed, as the outbox keeps it. */
export interface KeeperSendRow {
  id: string;
  chainId: string;
  /** Null until a sender takes it. */
  account: string | null;
  tradeId: string;
  action: string;
  side: string;
  to: string;
  data: string;
  value: bigint;
  /** The chain time (unix seconds) from which the send is too late; null: no end. */
  notAfter: bigint | null;
  nonce: bigint | null;
  gasLimit: bigint | null;
  status: 'queued' | 'sent' | 'confirmed' | 'reverted' | 'failed' | 'expired';
  txHash: string | null;
  blockNumber: bigint | null;
  createdAt: Date;
  /** When it was given its call and became due to send (null for a send queued directly). */
  queuedAt: Date | null;
  sentAt: Date | null;
}

/** One signed transaction of a send. */
export interface KeeperAttemptRow {
  id: string;
  sendId: string;
  txHash: string;
  raw: string;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  createdAt: Date;
  broadcastAt: Date | null;
}

/** A write refused because this sender no longer holds the account's lease (another one took over). */
export class KeeperLeaseLostError extends Error {
  readonly code = 'KEEPER_LEASE_LOST';
}

/** Something to send, keyed by its business key (trade, action, side). */
export interface KeeperSendInput {
  chainId: string;
  account: string;
  tradeId: string;
  action: string;
  side: string;
  to: string;
  data: string;
  value?: bigint;
}

/**
 * Queues `input` unless its business key (trade, action, side) is already in the outbox: at most one
 * send per key, ever. Returns the send's id and whether this call created it.
 */
export async function enqueueKeeperSend(knex: Knex, input: KeeperSendInput): Promise<{ id: string; created: boolean }> {
  const inserted = await knex('keeper_sends')
    .insert({
      chain_id: input.chainId, account: input.account, trade_id: input.tradeId, action: input.action, side: input.side,
      to_address: input.to, call_data: input.data, value: (input.value ?? 0n).toString(),
    })
    .onConflict(['trade_id', 'action', 'side']).ignore()
    .returning('id');
  if (inserted.length > 0) return { id: String(inserted[0]!.id), created: true };
  const existing = await knex('keeper_sends').where({ trade_id: input.tradeId, action: input.action, side: input.side }).first('id');
  return { id: String(existing.id), created: false };
}

/**
 * Takes or renews the account's lease for `seconds`: a fencing token when this sender holds it now,
 * undefined while another sender's lease runs. A new holder always gets a greater token than any before.
 */
export async function takeKeeperLease(
  knex: Knex,
  who: { chainId: string; account: string; owner: string },
  seconds: number,
): Promise<string | undefined> {
  await knex('keeper_accounts').insert({ chain_id: who.chainId, account: who.account }).onConflict(['chain_id', 'account']).ignore();
  const { rows } = await knex.raw<{ rows: { lease_token: string }[] }>(
    `UPDATE keeper_accounts
        SET lease_token = CASE WHEN lease_owner = :owner AND lease_expires_at > now() THEN lease_token ELSE lease_token + 1 END,
            lease_owner = :owner,
            lease_expires_at = now() + make_interval(secs => :seconds)
      WHERE chain_id = :chainId AND account = :account
        AND (lease_owner IS NULL OR lease_owner = :owner OR lease_expires_at <= now())
      RETURNING lease_token`,
    { ...who, seconds },
  );
  return rows[0]?.lease_token === undefined ? undefined : String(rows[0].lease_token);
}

/** Gives the lease up (a sender stopping cleanly), so the next one need not wait for it to run out. */
export async function releaseKeeperLease(knex: Knex, fence: KeeperFence): Promise<void> {
  await knex('keeper_accounts')
    .where({ chain_id: fence.chainId, account: fence.account, lease_owner: fence.owner, lease_token: fence.token })
    .update({ lease_owner: null, lease_expires_at: null });
}

/**
 * Runs `work` in one transaction that first locks the account's row under `fence`: it throws
 * `KeeperLeaseLostError` (and writes nothing) when the lease has run out or another sender holds it.
 * `work` gets the transaction and the account's next nonce (null before the first).
 */
export async function withKeeperFence<T>(knex: Knex, fence: KeeperFence, work: (trx: Knex.Transaction, nextNonce: bigint | null) => Promise<T>): Promise<T> {
  return knex.transaction(async (trx) => {
    const row = await trx('keeper_accounts')
      .where({ chain_id: fence.chainId, account: fence.account, lease_owner: fence.owner, lease_token: fence.token })
      .andWhere('lease_expires_at', '>', trx.fn.now())
      .forUpdate()
      .first('next_nonce');
    if (!row) throw new KeeperLeaseLostError(`the keeper's lease on ${fence.account} (chain ${fence.chainId}) was lost: another sender holds it`);
    return work(trx, row.next_nonce === null ? null : BigInt(row.next_nonce));
  });
}

/** The account's sends still queued or sent, oldest first, with their attempts (oldest first). */
export async function openKeeperSends(knex: Knex, chainId: string, account: string): Promise<{ send: KeeperSendRow; attempts: KeeperAttemptRow[] }[]> {
  // A queued send belongs to no account until a sender takes it (the process that decided it holds no keeper key).
  const sends = (await knex('keeper_sends').where({ chain_id: chainId })
    .andWhere((q) => q.where({ account }).orWhere((unowned) => unowned.whereNull('account').andWhere({ status: 'queued' })))
    .whereIn('status', ['queued', 'sent']).orderBy('id')).map(sendOf);
  if (sends.length === 0) return [];
  const attempts = (await knex('keeper_attempts').whereIn('send_id', sends.map((s) => s.id)).orderBy('id')).map(attemptOf);
  return sends.map((send) => ({ send, attempts: attempts.filter((a) => a.sendId === send.id) }));
}

/** A send by its business key, with its attempts; undefined when none was queued. */
export async function keeperSendByKey(
  knex: Knex,
  key: { tradeId: string; action: string; side: string },
): Promise<{ send: KeeperSendRow; attempts: KeeperAttemptRow[] } | undefined> {
  const row = await knex('keeper_sends').where({ trade_id: key.tradeId, action: key.action, side: key.side }).first();
  if (!row) return undefined;
  const attempts = (await knex('keeper_attempts').where({ send_id: row.id }).orderBy('id')).map(attemptOf);
  return { send: sendOf(row), attempts };
}

/** The chains with a send queued or in flight (one index scan: keeper_sends_open). */
export async function chainsWithOpenKeeperSends(knex: Knex): Promise<string[]> {
  return (await knex('keeper_sends').whereIn('status', ['queued', 'sent']).distinct('chain_id')).map((row) => String(row.chain_id));
}

/** Sends per chain still open: queued (no nonce yet) and sent (waiting for their receipt at depth). */
export async function countOpenKeeperSends(knex: Knex): Promise<{ chainId: string; status: string; count: number }[]> {
  const rows = await knex('keeper_sends').whereIn('status', ['queued', 'sent']).groupBy('chain_id', 'status').select('chain_id', 'status').count('* as n');
  return rows.map((r) => ({ chainId: String(r.chain_id), status: String(r.status), count: Number(r.n) }));
}

/**
 * Within a fenced transaction: gives the send its nonce (the account's next becomes nonce + 1), its
 * gas limit (null on Stellar, where the fee holds the resources), and records its first signed
 * transaction, before anything is broadcast.
 */
export async function recordFirstAttempt(
  trx: Knex.Transaction,
  fence: KeeperFence,
  send: { id: string; nonce: bigint; gasLimit: bigint | null },
  attempt: { txHash: string; raw: string; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
): Promise<void> {
  await trx('keeper_accounts').where({ chain_id: fence.chainId, account: fence.account }).update({ next_nonce: (send.nonce + 1n).toString() });
  const updated = await trx('keeper_sends').where({ id: send.id, status: 'queued' })
    .update({ status: 'sent', account: fence.account, nonce: send.nonce.toString(), gas_limit: send.gasLimit?.toString() ?? null, sent_at: trx.fn.now() });
  if (updated !== 1) throw new Error(`keeper send ${send.id} is no longer queued`);
  await insertAttempt(trx, send.id, attempt);
}

/**
 * Within a fenced transaction: a sent send whose transactions can no longer land (their time bounds
 * passed) and never used their sequence number gets a new one (`nonce`; the account's next becomes
 * nonce + 1) and its rebuilt transaction is recorded, before it is broadcast. The old transactions
 * stay recorded.
 */
export async function recordRebuiltAttempt(
  trx: Knex.Transaction,
  fence: KeeperFence,
  send: { id: string; nonce: bigint },
  attempt: { txHash: string; raw: string; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
): Promise<void> {
  await trx('keeper_accounts').where({ chain_id: fence.chainId, account: fence.account }).update({ next_nonce: (send.nonce + 1n).toString() });
  const updated = await trx('keeper_sends').where({ id: send.id, status: 'sent' })
    .update({ nonce: send.nonce.toString(), tx_hash: null, block_number: null, block_hash: null });
  if (updated !== 1) throw new Error(`keeper send ${send.id} is no longer sent`);
  await insertAttempt(trx, send.id, attempt);
}

/**
 * Within a fenced transaction: a send that ends without ever using its nonce (its transactions
 * expired unmined) gives the number back: its own nonce is cleared, and the account's next nonce goes
 * back to it when no later one was handed out, so the next send leaves no gap (Stellar's sequence
 * numbers must follow one another).
 */
export async function giveNonceBack(trx: Knex.Transaction, fence: KeeperFence, sendId: string, nonce: bigint): Promise<void> {
  await trx('keeper_sends').where({ id: sendId, nonce: nonce.toString() }).update({ nonce: null });
  await trx('keeper_accounts').where({ chain_id: fence.chainId, account: fence.account, next_nonce: (nonce + 1n).toString() })
    .update({ next_nonce: nonce.toString() });
}

/** Within a fenced transaction: records one more signed transaction of a send (a replacement, same nonce). */
export async function insertAttempt(
  trx: Knex.Transaction,
  sendId: string,
  attempt: { txHash: string; raw: string; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
): Promise<void> {
  await trx('keeper_attempts').insert({
    send_id: sendId, tx_hash: attempt.txHash, raw: attempt.raw,
    max_fee_per_gas: attempt.maxFeePerGas.toString(), max_priority_fee_per_gas: attempt.maxPriorityFeePerGas.toString(),
  });
}

/** Notes that an attempt reached a provider (it answered the broadcast). */
export async function markBroadcast(knex: Knex, txHash: string): Promise<void> {
  await knex('keeper_attempts').where({ tx_hash: txHash }).whereNull('broadcast_at').update({ broadcast_at: knex.fn.now() });
}

/** Within a fenced transaction: where a send's transaction was seen mined (null: not, or no longer, after a reorg). */
export async function recordInclusion(
  trx: Knex.Transaction,
  sendId: string,
  seen: { txHash: string; blockNumber: bigint; blockHash: string | null } | null,
): Promise<void> {
  await trx('keeper_sends').where({ id: sendId }).update(seen
    ? { tx_hash: seen.txHash, block_number: seen.blockNumber.toString(), block_hash: seen.blockHash }
    : { tx_hash: null, block_number: null, block_hash: null });
}

/** Within a fenced transaction: a send's outcome, final (`expired`: its window, `not_after` in chain time, closed before it landed). */
export async function finishKeeperSend(
  trx: Knex.Transaction,
  sendId: string,
  outcome: { status: 'confirmed' | 'reverted' | 'failed' | 'expired'; txHash?: string; blockNumber?: bigint; blockHash?: string; error?: string },
): Promise<void> {
  await trx('keeper_sends').where({ id: sendId }).whereIn('status', ['queued', 'sent']).update({
    status: outcome.status,
    tx_hash: outcome.txHash ?? null,
    block_number: outcome.blockNumber?.toString() ?? null,
    block_hash: outcome.blockHash ?? null,
    last_error: outcome.error ?? null,
    finished_at: trx.fn.now(),
  });
}

/** Notes the last problem met while sending (an RPC error, a refused broadcast), for operators. */
export async function noteKeeperError(knex: Knex, sendId: string, error: string): Promise<void> {
  await knex('keeper_sends').where({ id: sendId }).update({ last_error: error.slice(0, 2_000) });
}

function sendOf(row: Record<string, any>): KeeperSendRow {
  return {
    id: String(row.id), chainId: row.chain_id, account: row.account, tradeId: row.trade_id, action: row.action, side: row.side,
    to: row.to_address, data: row.call_data, value: BigInt(row.value), notAfter: row.not_after === null ? null : BigInt(row.not_after),
    nonce: row.nonce === null ? null : BigInt(row.nonce), gasLimit: row.gas_limit === null ? null : BigInt(row.gas_limit),
    status: row.status, txHash: row.tx_hash, blockNumber: row.block_number === null ? null : BigInt(row.block_number),
    createdAt: row.created_at, queuedAt: row.queued_at, sentAt: row.sent_at,
  };
}

function attemptOf(row: Record<string, any>): KeeperAttemptRow {
  return {
    id: String(row.id), sendId: String(row.send_id), txHash: row.tx_hash, raw: row.raw,
    maxFeePerGas: BigInt(row.max_fee_per_gas), maxPriorityFeePerGas: BigInt(row.max_priority_fee_per_gas),
    createdAt: row.created_at, broadcastAt: row.broadcast_at,
  };
}
