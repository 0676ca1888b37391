import type { Knex } from 'knex';
import type { ChainStateReader } from '../chains/state.ts';
import { hasLiveClose } from '../db/repositories/ad-requests.ts';
import { changeLockedAd, findAd, type AdChange, type AdRecord } from '../db/repositories/ads.ts';
import type { ChainConnection } from '../db/repositories/registry-cache.ts';
import { AdNotFoundError, AdStateError, InsufficientLiquidityError } from './errors.ts';
import { isPublished } from './queries.ts';
import { askLapsedRequests, settleLapsedInLock, type LapsedAnswers } from './lapsed-holds.ts';
import { applyOperations, balancesOf, type AdBalances, type LedgerOperation } from './ledger.ts';
import { admitReservation, type Admission } from './request-machine.ts';

/**
 * The ads port: the one way into an ad's row and balances, for the ads' own use cases and for
 * trades (which import nothing else of ads/ but the pure ledger and the errors). It locks the ad
 * (SELECT ... FOR UPDATE, once per transaction), settles the holds of its lapsed withdraw and close
 * requests first (ads/lapsed-holds.ts, through the request machine), and writes the ledger
 * operations a change returns in one UPDATE.
 */

export type { LapsedAnswers } from './lapsed-holds.ts';

/** An ad under its row lock: the row as locked, and its balances once lapsed holds were given back. */
export interface LockedAd {
  ad: AdRecord;
  balances: AdBalances;
}

/** What a change under the lock makes: ledger operations on the balances (in order) and settings. */
export interface LockedAdChange {
  operations?: readonly LedgerOperation[];
  set?: AdChange['set'];
}

/**
 * Locks the ad in `trx`, gives back the holds `lapsed` says never ran (asked before the lock:
 * `askLapsedHolds`), hands the ad to `change`, which may read and write other rows in `trx` and
 * throws to refuse, and writes the operations and settings it returns. Returns the ad as it now
 * stands, or undefined (`change` not called) when there is no such ad.
 */
export async function withAdLocked(
  trx: Knex.Transaction, adId: string, change: (locked: LockedAd) => LockedAdChange | Promise<LockedAdChange>, lapsed?: LapsedAnswers,
): Promise<AdRecord | undefined> {
  return changeLockedAd(trx, adId, async (ad) => {
    const freed = applyOperations(balancesOf(ad), lapsed ? await settleLapsedInLock(trx, lapsed) : []);
    const { operations = [], set } = await change({ ad, balances: freed });
    return { balances: applyOperations(freed, operations), set };
  });
}

/**
 * Asks the ad chain, before any lock, whether the ad's requests whose confirmation window closed
 * before `cutoff` ran: the answers `withAdLocked` settles. A hanging RPC stalls nobody's lock.
 */
export function askLapsedHolds(
  knex: Knex, chainState: ChainStateReader, chain: ChainConnection, adId: string, cutoff: Date, signedRequestTtlSeconds: number,
): Promise<LapsedAnswers> {
  return askLapsedRequests(knex, chainState, chain, adId, cutoff, signedRequestTtlSeconds);
}

/**
 * Settles `lapsed` on its own, for a caller with no change of its own to make to the ad (the books
 * audit): one transaction under the ad row lock, the same rule every change applies first.
 */
export async function settleLapsedHolds(knex: Knex, lapsed: LapsedAnswers): Promise<void> {
  if (lapsed.answers.size === 0) return;
  await knex.transaction(async (trx) => {
    await withAdLocked(trx, lapsed.adId, () => ({}), lapsed);
  });
}

/** The ad a trade would be made against, unlocked: `AdNotFoundError` when there is none or it is not on chain yet (PENDING). */
export async function adForTrade(knex: Knex, adId: string): Promise<AdRecord> {
  const ad = await findAd(knex, adId);
  if (!ad || !isPublished(ad)) throw new AdNotFoundError(adId);
  return ad;
}

export interface Reservation {
  adId: string;
  /** In the ad token's base units. */
  amount: bigint;
  /** The amount as the caller words it, for the refusal's message. */
  what: string;
  lapsed: LapsedAnswers;
  /** Close requests whose deadline is before this can no longer be confirmed: they block nothing. */
  closeCutoff: Date;
  /** The caller's own checks under the ad row lock, after the ad's (it throws to refuse). */
  admit?: (locked: LockedAd) => Promise<void>;
}

/**
 * Reserves `amount` of the ad for a trade inside `trx`, under the ad row lock: lapsed holds given
 * back first, then the request machine's `admitReservation` (ACTIVE, no close under way, that much
 * available: `AdStateError` or `InsufficientLiquidityError` otherwise), then the caller's `admit`,
 * then the ledger's `reserve`.
 */
export async function reserve(trx: Knex.Transaction, reservation: Reservation): Promise<void> {
  const { adId, amount } = reservation;
  const changed = await withAdLocked(trx, adId, async (locked) => {
    const { ad, balances } = locked;
    // Asked only of an ad that could otherwise take the trade: a refused one costs no query.
    const closeUnderWay = ad.baseStatus === 'ACTIVE' && await hasLiveClose(trx, adId, reservation.closeCutoff);
    assertAdmitted(admitReservation({ id: adId, status: ad.status, baseStatus: ad.baseStatus, balances }, amount, closeUnderWay, reservation.what));
    await reservation.admit?.(locked);
    return { operations: [{ op: 'reserve', amount }] };
  }, reservation.lapsed);
  if (!changed) throw new AdNotFoundError(adId);
}

/** What a trade's change may know of its ad under the lock. */
export interface TradeAdView {
  /** The ad's close was confirmed: a lock released on chain now pays its Maker (AdManager.releaseLock). */
  closed: boolean;
}

/**
 * Applies a trade's ledger operations (release a reservation, take it into a lock, pay a lock out,
 * return it) to its ad inside the caller's open transaction `trx`, under the ad row lock:
 * `operationsOf` is given what it may need of the ad. The one way trades move an ad's balances
 * after the reservation; nothing is written when it returns no operation.
 */
export async function applyTradeOperations(
  trx: Knex.Transaction, adId: string, operationsOf: (ad: TradeAdView) => readonly LedgerOperation[],
): Promise<void> {
  await withAdLocked(trx, adId, ({ ad }) => ({ operations: operationsOf({ closed: ad.baseStatus === 'CLOSED' }) }));
}

/** Throws the admission's refusal as the API's error: `AdStateError` or `InsufficientLiquidityError` (both 409). */
export function assertAdmitted(admission: Admission): asserts admission is Extract<Admission, { ok: true }> {
  if (admission.ok) return;
  throw admission.refusal === 'LIQUIDITY' ? new InsufficientLiquidityError(admission.message) : new AdStateError(admission.message);
}
