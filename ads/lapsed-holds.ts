import type { Knex } from 'knex';
import { requestExecutedCheck, type ChainStateReader } from '../chains/state.ts';
import { lapsedRequests, settleLapsedRequests } from '../db/repositories/ad-requests.ts';
import type { ChainConnection } from '../db/repositories/registry-cache.ts';
import { changeLockedAd } from '../db/repositories/ads.ts';
import { applyOperation, balancesOf, type AdBalances } from './ledger.ts';

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
 * holds the ad row lock, and returns `balances` with the holds of the requests that never ran given
 * back through the ledger. Requests confirmed in between keep what their confirmation did.
 */
export async function freeLapsedHolds(trx: Knex.Transaction, balances: AdBalances, lapsed: LapsedAnswers): Promise<AdBalances> {
  if (lapsed.answers.size === 0) return balances;
  const released = await settleLapsedRequests(trx, lapsed.adId, lapsed.answers);
  return released > 0n ? applyOperation(balances, { op: 'free', amount: released }) : balances;
}

/**
 * Settles `lapsed` on its own, for a caller with no change of its own to make to the ad (the books
 * audit): one transaction under the ad row lock, the same rule a Maker action applies first
 * (`freeLapsedHolds`): a request still PENDING that never ran becomes EXPIRED and its hold goes
 * back to the available balance, one that ran becomes EXECUTED and keeps it.
 */
export async function settleLapsedHolds(knex: Knex, lapsed: LapsedAnswers): Promise<void> {
  if (lapsed.answers.size === 0) return;
  await knex.transaction(async (trx) => {
    await changeLockedAd(trx, lapsed.adId, async (ad) => ({ balances: await freeLapsedHolds(trx, balancesOf(ad), lapsed) }));
  });
}
