import type { Knex } from 'knex';
import { idPage, type IdPage, type IdPageResult } from '../pagination.ts';

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
  /**
   * PENDING until confirmed; EXPIRED when its window closed and the chain says it never ran (its
   * hold went back); EXECUTED when its window closed unconfirmed but the chain says it ran (its hold stays).
   */
  status: 'PENDING' | 'CONFIRMED' | 'EXPIRED' | 'EXECUTED';
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

/**
 * Every request of an ad, newest first: a reported transaction may answer any of them that is not
 * confirmed yet, however late (the contract refuses a transaction mined after the deadline).
 */
export async function requestsOfAd(knex: Knex, adId: string): Promise<AdRequestRecord[]> {
  return knex('ad_requests').select(SELECT).where({ ad_id: adId }).orderBy('created_at', 'desc');
}

/** Requests of the ad in `statuses` (all ads when `adId` is undefined), oldest first. */
export async function requestsInStatus(knex: Knex, statuses: AdRequestRecord['status'][], adId?: string): Promise<AdRequestRecord[]> {
  const query = knex('ad_requests').select(SELECT).whereIn('status', statuses).orderBy('created_at');
  return adId === undefined ? query : query.andWhere({ ad_id: adId });
}

/**
 * One page (id order, after `page.after`) of the requests the books audit asks the chains about:
 * every one not confirmed nor expired (PENDING, EXECUTED), and how many follow the page.
 */
export async function unsettledRequestsPage(knex: Knex, page: IdPage): Promise<IdPageResult<AdRequestRecord>> {
  return idPage(() => knex('ad_requests').select(SELECT).whereIn('status', ['PENDING', 'EXECUTED']), page);
}

/** One request, locked for the rest of `trx`. */
export async function lockAdRequest(trx: Knex.Transaction, id: string): Promise<AdRequestRecord | undefined> {
  return trx('ad_requests').select(SELECT).where({ id }).forUpdate().first();
}

export async function markAdRequestConfirmed(trx: Knex.Transaction, id: string, txHash: string): Promise<void> {
  await trx('ad_requests').where({ id }).update({ status: 'CONFIRMED', tx_hash: txHash, confirmed_at: trx.fn.now() });
}

/**
 * The ad's pending requests whose confirmation window closed before `cutoff` (read without a lock:
 * the chain is asked about them before the ad row is locked; ads/lapsed-holds.ts applies the answers
 * under it to the requests still pending then).
 */
export async function lapsedRequests(knex: Knex, adId: string, cutoff: Date): Promise<AdRequestRecord[]> {
  return knex('ad_requests').select(SELECT).where({ ad_id: adId, status: 'PENDING' }).andWhere('deadline', '<=', cutoff).orderBy('created_at');
}

/**
 * The ad's requests in `statuses` (only `ids` when given; never `exceptId`), locked for the rest of
 * `trx`, oldest first. The caller holds the ad row lock; what happens to them is the request
 * machine's to say (ads/request-machine.ts).
 */
export async function lockAdRequests(
  trx: Knex.Transaction, adId: string, filter: { statuses: readonly AdRequestRecord['status'][]; ids?: readonly string[]; exceptId?: string },
): Promise<AdRequestRecord[]> {
  if (filter.ids?.length === 0) return [];
  const query = trx('ad_requests').select(SELECT).where({ ad_id: adId }).whereIn('status', [...filter.statuses]);
  if (filter.ids) query.whereIn('id', [...filter.ids]);
  if (filter.exceptId !== undefined) query.whereNot({ id: filter.exceptId });
  return query.orderBy('created_at').forUpdate();
}

/** Sets the status of the requests `ids` (locked by the caller), as the request machine decided. */
export async function setAdRequestStatus(trx: Knex.Transaction, ids: readonly string[], status: AdRequestRecord['status']): Promise<void> {
  if (ids.length === 0) return;
  await trx('ad_requests').whereIn('id', [...ids]).update({ status });
}

/**
 * True when the ad has a close request that may still be confirmed, or that the chain says was
 * carried out (no new trade may reserve against it).
 */
export async function hasLiveClose(knex: Knex, adId: string, notBefore: Date): Promise<boolean> {
  const row = await knex('ad_requests').where({ ad_id: adId, action: 'closeAd' })
    .andWhere((q) => q.where('status', 'EXECUTED').orWhere((p) => p.where('status', 'PENDING').andWhere('deadline', '>', notBefore)))
    .first('id');
  return row !== undefined;
}

/**
 * Serialises, until `trx` ends, every action that records an ad request for this user (a
 * transaction-scoped advisory lock on the user id): two concurrent requests of one user count
 * their open requests one after the other, so together they cannot pass a per-user limit.
 */
export async function lockUserAdRequests(trx: Knex.Transaction, userId: string): Promise<void> {
  await trx.raw(`SELECT pg_advisory_xact_lock(hashtextextended('ad-requests:' || ?, 0))`, [userId]);
}

/** What a user has in progress on ads, for the per-user limits (`openAdRequests`). */
export interface OpenAdRequests {
  /** Ads not on chain yet whose create request is still in its confirmation window. */
  pendingAds: number;
  /** Requests of any action still in their confirmation window, unconfirmed. */
  openRequests: number;
  /** The earliest deadline among those requests (its window ends a grace later); null when there are none. */
  firstDeadline: Date | null;
}

/**
 * The unconfirmed (PENDING) requests of the ads created by `creators` whose deadline is after
 * `notBefore` (deadline + CONFIRM_GRACE_SECONDS still ahead): the ones a Maker may still be about to
 * send. Lapsed ones are the books audit's to settle and count no more.
 */
export async function openAdRequests(knex: Knex, creators: string[], notBefore: Date): Promise<OpenAdRequests> {
  const row: { pending_ads: string; open_requests: string; first_deadline: Date | null } = await knex('ad_requests as r')
    .join('ads as a', 'a.id', 'r.ad_id')
    .whereIn('a.creator_address', creators)
    .andWhere('r.status', 'PENDING')
    .andWhere('r.deadline', '>', notBefore)
    .first(
      knex.raw(`count(*) FILTER (WHERE r.action = 'createAd' AND a.base_status = 'PENDING') AS pending_ads`),
      knex.raw('count(*) AS open_requests'),
      knex.raw('min(r.deadline) AS first_deadline'),
    );
  return { pendingAds: Number(row.pending_ads), openRequests: Number(row.open_requests), firstDeadline: row.first_deadline };
}
