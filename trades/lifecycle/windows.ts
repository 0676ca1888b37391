import { DEFAULT_ORDER_TIMING, HTLC_LIMITS } from '../../domain/htlc.ts';
import { UNLOCK_SIDES } from './unlock-order.ts';
import type { UnlockSide } from './machine.ts';

/**
 * Every window and expiry of a trade, in one place: how long a reservation lives, until when the
 * Maker may lock, until when each unlock is accepted, and how soon a lock window the chain has not
 * closed is looked at again. The configuration takes its defaults and bounds from here, so no other
 * module re-derives them.
 */

export { DEFAULT_ORDER_TIMING };

/** KEEPER_UNLOCK_AFTER_SECONDS when unset: ten minutes for a party to send a due unlock itself before the keeper does. */
export const DEFAULT_KEEPER_UNLOCK_AFTER_SECONDS = 600;

/** TRADE_RESERVATION_TTL_SECONDS when unset: ten minutes to deposit. */
export const DEFAULT_RESERVATION_TTL_SECONDS = 600;

/**
 * How long after its deposit request's deadline a reservation runs out: a deposit mined in a block
 * stamped at the deadline is seen by then, and the chain is asked before anything is given back.
 */
export const RESERVATION_CHAIN_MARGIN_SECONDS = 10;

/** Longest wait before the lock window is looked at again while the chain's time has not passed the deadline. */
export const LOCK_WINDOW_RECHECK_MAX_SECONDS = 15;
/** Shortest such wait: a chain a second behind is not asked again at once. */
export const LOCK_WINDOW_RECHECK_MIN_SECONDS = 2;

/** What sets how long a new trade's deposit request and reservation live (the two TTL settings). */
export interface ReservationSettings {
  signedRequestTtlSeconds: number;
  reservationTtlSeconds: number;
}

/** The deposit request's lifetime: the deposit request and the reservation end together (after its deadline no deposit can happen). */
export function depositTtlSeconds(settings: ReservationSettings): number {
  return Math.min(settings.signedRequestTtlSeconds, settings.reservationTtlSeconds);
}

/** When the reservation of a deposit request with this deadline (unix seconds) runs out. */
export function reservationExpiry(depositDeadlineSeconds: number): Date {
  return new Date((depositDeadlineSeconds + RESERVATION_CHAIN_MARGIN_SECONDS) * 1000);
}

/**
 * The shortest ORDER_LOCK_EXPIRY_SECONDS that still lets a deposit made at its request's deadline
 * (`depositTtl` seconds after creation) be locked: the contracts refuse a lock with less than their
 * minimum unlock window left before lockExpiry.
 */
export function minLockExpirySeconds(depositTtl: number): number {
  return depositTtl + HTLC_LIMITS.minUnlockWindowSeconds + 1;
}

/** The last second a lock is accepted (lockExpiry - the contracts' minimum unlock window): no lock request is signed valid beyond it. */
export function lockDeadline(times: { lockExpiry: string }): string {
  return String(BigInt(times.lockExpiry) - BigInt(HTLC_LIMITS.minUnlockWindowSeconds));
}

/**
 * The last second (unix seconds, as the order's times are) an unlock of `side` is accepted on
 * chain: signed unlock call data never outlives it, and none is signed once it has passed.
 */
export function unlockWindowEnd(side: UnlockSide, times: { lockExpiry: string; refundTime: string }): string {
  return times[UNLOCK_SIDES[side].closesAt];
}

/** The moment (ISO 8601) `seconds` after `nowMs`: when a put-off timer is looked at again. */
export function lookAgainAt(nowMs: number, seconds: number): string {
  return new Date(nowMs + seconds * 1000).toISOString();
}
