/**
 * The hash time-lock rule of an order (devnet/README.md "Timeouts"), the one description the
 * contracts, the signing code and the trade lifecycle share. Two times travel in the order (and so
 * in its hash):
 *   lockExpiry (L, ad chain):    the Bridger's unlock on the AdManager is accepted while now < L;
 *                                from L on, the Maker may release a lock that was never unlocked.
 *   refundTime (P, order chain): the Maker's unlock on the OrderPortal is accepted while now < P;
 *                                from P on, the Bridger may refund a deposit that was never unlocked.
 * with P >= L + MIN_REFUND_MARGIN, so a Bridger who unlocks the ad side at the last moment still
 * leaves the Maker at least that long to unlock the order side before any refund is possible.
 */

import { DEFAULT_ORDER_TIMING, HTLC_LIMITS, type OrderTimingPolicy } from '../domain/htlc.ts';

export { DEFAULT_ORDER_TIMING, HTLC_LIMITS, type OrderTimingPolicy };

/** An order's times, unix seconds as decimal strings: the two OrderParams fields, ready to spread into them. */
export interface OrderTimes {
  lockExpiry: string;
  refundTime: string;
}

/**
 * The times of an order created at `createdAtSeconds` (unix seconds) under `policy`. Throws
 * `RangeError` naming the policy field when the policy could yield an order the contracts refuse,
 * given `depositTtlSeconds` (the createOrder request's validity: the deposit may land that late).
 */
export function computeOrderTimes(
  createdAtSeconds: number,
  policy: OrderTimingPolicy = DEFAULT_ORDER_TIMING,
  depositTtlSeconds = 0,
): OrderTimes {
  if (!Number.isSafeInteger(createdAtSeconds) || createdAtSeconds < 0) {
    throw new RangeError(`createdAtSeconds must be a non-negative integer, received ${createdAtSeconds}`);
  }
  assertOrderTimingPolicy(policy, depositTtlSeconds);
  const lockExpiry = createdAtSeconds + policy.lockExpirySeconds;
  return { lockExpiry: String(lockExpiry), refundTime: String(lockExpiry + policy.refundMarginSeconds) };
}

/** Throws `RangeError` naming the field when `policy` breaks HTLC_LIMITS for a deposit made up to `depositTtlSeconds` late. */
export function assertOrderTimingPolicy(policy: OrderTimingPolicy, depositTtlSeconds = 0): void {
  const { lockExpirySeconds, refundMarginSeconds } = policy;
  for (const [name, value] of Object.entries(policy)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`${name} must be a positive integer, received ${value}`);
  }
  const minLock = depositTtlSeconds + HTLC_LIMITS.minUnlockWindowSeconds;
  if (lockExpirySeconds <= minLock) {
    throw new RangeError(`lockExpirySeconds must exceed the deposit TTL plus ${HTLC_LIMITS.minUnlockWindowSeconds} ` +
      `s (${minLock}), received ${lockExpirySeconds}`);
  }
  if (refundMarginSeconds < HTLC_LIMITS.minRefundMarginSeconds) {
    throw new RangeError(`refundMarginSeconds must be at least ${HTLC_LIMITS.minRefundMarginSeconds}, received ${refundMarginSeconds}`);
  }
  if (lockExpirySeconds + refundMarginSeconds > HTLC_LIMITS.maxOrderLifetimeSeconds) {
    throw new RangeError(`lockExpirySeconds + refundMarginSeconds must be at most ${HTLC_LIMITS.maxOrderLifetimeSeconds}`);
  }
}

/**
 * Why the contracts would refuse these times at `nowSeconds` (createOrder and lockForOrder apply the
 * same check), or null when they are acceptable.
 */
export function orderTimesProblem(times: OrderTimes, nowSeconds: number): string | null {
  const now = BigInt(nowSeconds);
  const lockExpiry = BigInt(times.lockExpiry);
  const refundTime = BigInt(times.refundTime);
  if (lockExpiry < now + BigInt(HTLC_LIMITS.minUnlockWindowSeconds)) return 'lockExpiry leaves the Bridger less than the minimum unlock window';
  if (refundTime < lockExpiry + BigInt(HTLC_LIMITS.minRefundMarginSeconds)) return 'refundTime is less than the minimum margin after lockExpiry';
  if (refundTime > now + BigInt(HTLC_LIMITS.maxOrderLifetimeSeconds)) return 'refundTime is beyond the maximum order lifetime';
  return null;
}

/** What each party may do on chain at `nowSeconds`, as the contracts decide it (state permitting). */
export interface OrderWindows {
  /** lockForOrder is accepted (now <= lockDeadline). */
  lockOpen: boolean;
  /** AdManager.unlock (pays the Bridger) is accepted: now < lockExpiry. */
  adUnlockOpen: boolean;
  /** AdManager.releaseLock (back to the Maker) is accepted: now >= lockExpiry. */
  releaseOpen: boolean;
  /** OrderPortal.unlock (pays the Maker) is accepted: now < refundTime. */
  portalUnlockOpen: boolean;
  /** OrderPortal.refund (back to the Bridger) is accepted: now >= refundTime. */
  refundOpen: boolean;
}

/** The windows of an order at `nowSeconds`: a trade whose lock window closed without a lock is over (EXPIRED). */
export function orderWindows(times: OrderTimes, nowSeconds: number): OrderWindows {
  const now = BigInt(nowSeconds);
  const lockExpiry = BigInt(times.lockExpiry);
  const refundTime = BigInt(times.refundTime);
  return {
    lockOpen: now + BigInt(HTLC_LIMITS.minUnlockWindowSeconds) <= lockExpiry,
    adUnlockOpen: now < lockExpiry,
    releaseOpen: now >= lockExpiry,
    portalUnlockOpen: now < refundTime,
    refundOpen: now >= refundTime,
  };
}

/**
 * The TTL to sign a request with so that it never outlives `cap` (unix seconds; e.g. lockDeadline
 * for a lock, lockExpiry or refundTime for an unlock): min(ttlSeconds, cap - now), or 0 when the cap
 * has passed (sign nothing then).
 */
export function ttlWithin(cap: string, nowSeconds: number, ttlSeconds: number): number {
  const left = Number(BigInt(cap) - BigInt(nowSeconds));
  return Math.max(0, Math.min(ttlSeconds, left));
}

/**
 * How much earlier than its signing a request's (or a trade's first) transaction is looked for: the
 * skew between this service's clock and the chain's block timestamps, which a log search starts from.
 */
export const SEARCH_GRACE_SECONDS = 300;

/**
 * Where a log search for what a request signed with a deadline `anchor` did starts: a request is
 * signed at most `signedRequestTtlSeconds` before its deadline (a trade's reservation ends at most
 * that long, plus a margin within the grace, after its deposit request was signed), and nothing it
 * caused is older. A request signed under a longer TTL than today's (the setting lowered since) is
 * searched too late and shows up as drift, never as a silent pass.
 */
export function searchStart(anchor: Date, signedRequestTtlSeconds: number): Date {
  return new Date(anchor.getTime() - (signedRequestTtlSeconds + SEARCH_GRACE_SECONDS) * 1000);
}
