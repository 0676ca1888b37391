import type { AdAction, AdRequestRecord } from '../db/repositories/ad-requests.ts';
import type { AdRecord } from '../db/repositories/ads.ts';
import { available, type AdBalances, type LedgerOperation } from './ledger.ts';

/**
 * The ad request machine, pure: every rule of an ad's requests (what a Maker may ask for, and what
 * a chain fact does to a request and its ad) as functions of values. The use cases read the facts,
 * ask the machine, and write what it says through the port (ads/port.ts) and db/; nothing else
 * decides a request's next status or the ledger operation it makes.
 */

export type RequestStatus = AdRequestRecord['status'];
export const REQUEST_STATUSES: readonly RequestStatus[] = ['PENDING', 'CONFIRMED', 'EXPIRED', 'EXECUTED'];

/** A chain fact about one request. */
export type RequestEvent =
  /** Its event was verified final on the ad chain; `amount` is what the event says moved (0 when it names none). */
  | { type: 'CONFIRMED'; amount: bigint }
  /** Its confirmation window closed unconfirmed, and the chain says whether it ran. */
  | { type: 'LAPSED'; ran: boolean }
  /** A close of the same ad was confirmed: the contract refuses every other request from now on. */
  | { type: 'VOIDED' };

/** What the machine needs of a request and, for a confirmation, of its ad under the row lock. */
export interface RequestFacts {
  action: AdAction;
  status: RequestStatus;
  /** What the request holds of the ad (withdraw and close), in the ad token's base units. */
  held: bigint;
}

/** The ad as locked, with its balances so far (earlier requests of the same transaction applied). */
export interface AdFacts {
  baseStatus: AdRecord['baseStatus'];
  balances: AdBalances;
}

export type RequestStep =
  /** The request moves to `status`; `operation` (if any) changes the ad's balances, `setAd` its status, `voidOthers` ends its other requests. */
  | { kind: 'moved'; status: RequestStatus; operation?: LedgerOperation; setAd?: 'ACTIVE' | 'CLOSED'; voidOthers?: true }
  /** Nothing to do: the fact was applied already or no longer concerns the request. */
  | { kind: 'ignored' }
  /** The books cannot take the fact (a payout beyond what is free): a conflict the audit reports. */
  | { kind: 'refused'; free: bigint };

/**
 * The next status of a request on a chain fact, and what it does to the ad. A confirmation is
 * applied once, from any status but CONFIRMED (a late one too: the chain is the truth); a lapse
 * only moves a PENDING request (never ran: EXPIRED, its hold back; ran: EXECUTED, the hold stays
 * until its event is applied); a void ends PENDING and EXECUTED requests (the close's payout took
 * their holds).
 */
export function stepRequest(request: RequestFacts, event: RequestEvent, ad?: AdFacts): RequestStep {
  switch (event.type) {
    case 'CONFIRMED':
      if (request.status === 'CONFIRMED') return { kind: 'ignored' };
      if (!ad) throw new Error('stepRequest: a confirmation needs the locked ad');
      return confirmed(request, event.amount, ad);
    case 'LAPSED':
      if (request.status !== 'PENDING') return { kind: 'ignored' };
      if (event.ran) return { kind: 'moved', status: 'EXECUTED' };
      return { kind: 'moved', status: 'EXPIRED', operation: request.held > 0n ? { op: 'free', amount: request.held } : undefined };
    case 'VOIDED':
      if (request.status !== 'PENDING' && request.status !== 'EXECUTED') return { kind: 'ignored' };
      return { kind: 'moved', status: 'EXPIRED' };
  }
}

function confirmed(request: RequestFacts, amount: bigint, ad: AdFacts): RequestStep {
  switch (request.action) {
    case 'createAd':
      return { kind: 'moved', status: 'CONFIRMED', operation: { op: 'fund', amount }, setAd: 'ACTIVE' };
    case 'fundAd':
      return { kind: 'moved', status: 'CONFIRMED', operation: { op: 'fund', amount } };
    case 'withdrawFromAd': {
      // The contract refuses a withdraw after a close, so this one ran before it: the close's
      // payout (everything not locked, held or not) already counted it as paid out. A fact the
      // chain accepted under our signature: confirmed, and the books stay as they are.
      if (ad.baseStatus === 'CLOSED') return { kind: 'moved', status: 'CONFIRMED' };
      // PENDING and EXECUTED requests still hold their amount; an EXPIRED one gave it back.
      const held = request.status === 'EXPIRED' ? 0n : request.held;
      const free = available(ad.balances) + held;
      if (amount > free) return { kind: 'refused', free };
      return { kind: 'moved', status: 'CONFIRMED', operation: { op: 'withdraw', amount, held } };
    }
    case 'closeAd':
      // Every other request is void: the contract refuses them from now on.
      return { kind: 'moved', status: 'CONFIRMED', operation: { op: 'close' }, setAd: 'CLOSED', voidOthers: true };
  }
}

/** A Maker's ask for a new request on an existing ad, with the facts its rule needs. */
export type RequestAsk =
  | { action: 'fundAd'; closeUnderWay: boolean }
  | { action: 'withdrawFromAd'; amount: bigint }
  | { action: 'closeAd' };

export type Admission =
  /** Granted; `hold` (withdraw, close) is what the request holds from now until it is confirmed or lapses. */
  | { ok: true; hold?: bigint }
  /** Refused: `STATE` (409, the ad's state) or `LIQUIDITY` (409, not enough available). */
  | { ok: false; refusal: 'STATE' | 'LIQUIDITY'; message: string };

/**
 * Whether the ad takes a new fund, withdraw or close request: never while PENDING (not on chain
 * yet) or CLOSED; a fund not while a close is under way; a withdraw of at most the available
 * balance; a close not while trades hold reservations (their Bridgers would wait for a refund), and
 * it holds the whole available balance.
 */
export function admitRequest(ad: AdFacts & { id: string }, ask: RequestAsk): Admission {
  if (ad.baseStatus === 'PENDING') return refuse('STATE', `ad ${ad.id} is not on chain yet: confirm its create transaction first`);
  if (ad.baseStatus === 'CLOSED') return refuse('STATE', `ad ${ad.id} is closed`);
  switch (ask.action) {
    case 'fundAd':
      return ask.closeUnderWay ? refuse('STATE', `ad ${ad.id} has a close under way`) : { ok: true };
    case 'withdrawFromAd': {
      const free = available(ad.balances);
      if (ask.amount > free) return refuse('LIQUIDITY', `poolAmountWithdraw ${ask.amount} exceeds the available balance ${free} of ad ${ad.id}`);
      return { ok: true, hold: ask.amount };
    }
    case 'closeAd':
      if (ad.balances.reserved > 0n) {
        return refuse('STATE', `ad ${ad.id} has ${ad.balances.reserved} reserved for trades awaiting their lock: close it after they lock or expire `
          + '(an unfunded reservation ends with its deposit request, within TRADE_RESERVATION_TTL_SECONDS; pause the ad first so that no new one is made)');
      }
      return { ok: true, hold: available(ad.balances) };
  }
}

/** Whether the Maker may change the ad's status, bounds or metadata: only from ACTIVE or PAUSED (EXHAUSTED is ACTIVE with nothing available). */
export function admitUpdate(ad: { id: string; baseStatus: AdRecord['baseStatus'] }): Admission {
  if (ad.baseStatus === 'PENDING' || ad.baseStatus === 'CLOSED') return refuse('STATE', `ad ${ad.id} is ${ad.baseStatus} and cannot be updated`);
  return { ok: true };
}

/**
 * Whether the ad takes a trade's reservation of `amount` (ad token units): ACTIVE, no close under
 * way, and that much available. `status` (the shown one) and `what` (the amount as the caller
 * words it) only shape the message.
 */
export function admitReservation(
  ad: AdFacts & { id: string; status: string }, amount: bigint, closeUnderWay: boolean, what: string,
): Admission {
  if (ad.baseStatus !== 'ACTIVE') return refuse('STATE', `ad ${ad.id} is ${ad.status}: it takes no trades`);
  if (closeUnderWay) return refuse('STATE', `ad ${ad.id} is closing: it takes no trades`);
  const free = available(ad.balances);
  if (free < amount) return refuse('LIQUIDITY', `ad ${ad.id} cannot cover ${what}: ${free} available`);
  return { ok: true, hold: amount };
}

function refuse(refusal: 'STATE' | 'LIQUIDITY', message: string): Admission {
  return { ok: false, refusal, message };
}

/**
 * The statuses a request may be in for `event` (a lapse or a void, which need no ad facts) to move
 * it: what the repository selects and locks before the machine steps each one.
 */
export function statusesMovedBy(event: Exclude<RequestEvent, { type: 'CONFIRMED' }>): RequestStatus[] {
  return REQUEST_STATUSES.filter((status) => stepRequest({ action: 'fundAd', status, held: 0n }, event).kind === 'moved');
}
