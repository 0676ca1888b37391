import type { Knex } from 'knex';

export type AdAction = 'createAd' | 'fundAd' | 'withdrawFromAd' | 'closeAd';

/** A request the relayer signed for an ad, as stored. Amounts are decimal strings. */
export interface AdRequestRecord {
  id: string;
  adId: string;
  action: AdAction;
  amount: string | null;
  recipient: string | null;
  chainId: string;
  contractAddress: string;
  reqHash: string;
  authToken: string;
  deadline: Date;
  heldAmount: string;
  status: 'PENDING' | 'CONFIRMED' | 'EXPIRED';
  txHash: string | null;
}

const SELECT = [
  'id', 'ad_id as adId', 'action', 'amount', 'recipient', 'chain_id as chainId', 'contract_address as contractAddress',
  'req_hash as reqHash', 'auth_token as authToken', 'deadline', 'held_amount as heldAmount', 'status', 'tx_hash as txHash',
];

export type NewAdRequest = Omit<AdRequestRecord, 'id' | 'status' | 'txHash'>;

export async function insertAdRequest(trx: Knex.Transaction, request: NewAdRequest): Promise<void> {
  await trx('ad_requests').insert({
    ad_id: request.adId,
    action: request.action,
    amount: request.amount,
    recipient: request.recipient,
    chain_id: request.chainId,
    contract_address: request.contractAddress,
    req_hash: request.reqHash,
    auth_token: request.authToken,
    deadline: request.deadline,
    held_amount: request.heldAmount,
  });
}

/** The requests of an ad still waiting for their transaction and confirmable at `now` (deadline + grace not passed), newest first. */
export async function confirmableRequests(knex: Knex, adId: string, notBefore: Date): Promise<AdRequestRecord[]> {
  return knex('ad_requests').select(SELECT).where({ ad_id: adId, status: 'PENDING' }).andWhere('deadline', '>', notBefore).orderBy('created_at', 'desc');
}

/** The request a transaction already confirmed on a chain, if any (whatever the ad). */
export async function requestConfirmedBy(knex: Knex, chainId: string, txHash: string): Promise<AdRequestRecord | undefined> {
  return knex('ad_requests').select(SELECT).where({ chain_id: chainId, tx_hash: txHash }).first();
}

/** One request, locked for the rest of `trx`. */
export async function lockAdRequest(trx: Knex.Transaction, id: string): Promise<AdRequestRecord | undefined> {
  return trx('ad_requests').select(SELECT).where({ id }).forUpdate().first();
}

export async function markAdRequestConfirmed(trx: Knex.Transaction, id: string, txHash: string): Promise<void> {
  await trx('ad_requests').where({ id }).update({ status: 'CONFIRMED', tx_hash: txHash, confirmed_at: trx.fn.now() });
}

/**
 * Expires the ad's pending requests whose confirmation window closed before `cutoff` and returns
 * the total they held, for the caller (holding the ad row lock) to release.
 */
export async function expireAdRequests(trx: Knex.Transaction, adId: string, cutoff: Date): Promise<bigint> {
  const rows: { held_amount: string }[] = await trx('ad_requests')
    .where({ ad_id: adId, status: 'PENDING' })
    .andWhere('deadline', '<=', cutoff)
    .update({ status: 'EXPIRED' })
    .returning('held_amount');
  return rows.reduce((sum, row) => sum + BigInt(row.held_amount), 0n);
}

/** True when the ad has a close request that may still be confirmed (no new trade may reserve against it). */
export async function hasLiveClose(knex: Knex, adId: string, notBefore: Date): Promise<boolean> {
  const row = await knex('ad_requests').where({ ad_id: adId, action: 'closeAd', status: 'PENDING' }).andWhere('deadline', '>', notBefore).first('id');
  return row !== undefined;
}

/** Marks every other pending request of the ad expired (a confirmed close makes them impossible on chain). */
export async function voidOtherRequests(trx: Knex.Transaction, adId: string, keepId: string): Promise<void> {
  await trx('ad_requests').where({ ad_id: adId, status: 'PENDING' }).whereNot({ id: keepId }).update({ status: 'EXPIRED' });
}
