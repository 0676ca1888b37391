import type { Knex } from 'knex';
import { requestExecutedCheck, type ChainStateReader } from '../chains/state.ts';
import { lapsedRequests, lockAdRequests } from '../db/repositories/ad-requests.ts';
import type { ChainConnection } from '../db/repositories/registry-cache.ts';
import type { LedgerOperation } from './ledger.ts';
import { moveRequests } from './request-moves.ts';
import { statusesMovedBy } from './request-machine.ts';

/** What the chain said of an ad's lapsed requests: request id -> carried out. Unanswered ones are absent. */
export interface LapsedAnswers {
  adId: string;
  answers: ReadonlyMap<string, boolean>;
}

/**
 * Asks the ad chain about every request of the ad whose confirmation window closed before `cutoff`
 * (withdraw and close holds waiting to be given back): did it run? Called before the ad row is
 * locked, so an RPC that hangs (up to its timeout per request) stalls nobody else's reservation or
 * Maker action on the ad. A request the chain cannot answer for now is left out, to be asked next time.
 */
export async function askLapsedRequests(
  knex: Knex,
  chainState: ChainStateReader,
  chain: ChainConnection,
  adId: string,
  cutoff: Date,
  signedRequestTtlSeconds: number,
): Promise<LapsedAnswers> {
  const lapsed = await lapsedRequests(knex, adId, cutoff);
  const executed = requestExecutedCheck(chainState, chain, signedRequestTtlSeconds);
  const answers = new Map<string, boolean>();
  for (const request of lapsed) {
    const answer = await executed(request);
    if (answer !== undefined) answers.set(request.id, answer);
  }
  return { adId, answers };
}

/**
 * Applies `lapsed` (asked by `askLapsedRequests` before the lock) inside `trx`, where the caller
 * (ads/port.ts `withAdLocked`) holds the ad row lock, through the request machine: a request still
 * PENDING that never ran becomes EXPIRED and its hold goes back (the `free` operations returned),
 * one that ran becomes EXECUTED and keeps it (the money left on chain: giving it back would be
 * phantom liquidity). Requests confirmed or settled in between keep what was done to them.
 */
export async function settleLapsedInLock(trx: Knex.Transaction, lapsed: LapsedAnswers): Promise<LedgerOperation[]> {
  if (lapsed.answers.size === 0) return [];
  const requests = await lockAdRequests(trx, lapsed.adId, { ids: [...lapsed.answers.keys()], statuses: statusesMovedBy({ type: 'LAPSED', ran: false }) });
  return moveRequests(trx, requests, (request) => ({ type: 'LAPSED', ran: lapsed.answers.get(request.id)! }));
}
