import { z } from 'zod';
import {
  DEFAULT_KEEPER_UNLOCK_AFTER_SECONDS, DEFAULT_ORDER_TIMING, DEFAULT_RESERVATION_TTL_SECONDS, depositTtlSeconds, minLockExpirySeconds,
} from '../../trades/lifecycle/windows.ts';
import { defineConcern, intFromEnv } from './define.ts';

/** Ads and trades: signed requests' lifetimes, the lifecycle's timings, per-user and per-ad limits, the EIP-712 domain. */
export const tradeSettings = defineConcern({
  name: 'trades',
  schema: z.object({
    /** Seconds a signed request stays valid (its on-chain deadline). */
    SIGNED_REQUEST_TTL_SECONDS: intFromEnv(30, 86_400).default(600),
    /**
     * How long after a signed request's deadline its transaction may still be confirmed (the contract
     * refused it after the deadline, so a transaction that verifies was sent in time); withdraw and
     * close amounts stay held until then.
     */
    CONFIRM_GRACE_SECONDS: intFromEnv(0, 7 * 86_400).default(900),
    /**
     * Longest life of a trade's reservation, seconds. The deposit request (createOrder) is signed for
     * min(this, SIGNED_REQUEST_TTL_SECONDS) and the reservation ends with it: after its deadline no
     * deposit can happen, so nothing is held for free any longer.
     */
    TRADE_RESERVATION_TTL_SECONDS: intFromEnv(1, 7 * 86_400).default(DEFAULT_RESERVATION_TTL_SECONDS),
    /**
     * Seconds from a trade's creation to its order's lockExpiry (the Bridger's last second to unlock
     * the ad side); the Maker's lock is accepted until an hour before it (the contracts' minimum unlock
     * window), the lock window's timer fires then. refundTime follows 6 h later. Must exceed the
     * deposit request's TTL plus that hour (checked at start).
     */
    ORDER_LOCK_EXPIRY_SECONDS: intFromEnv(minLockExpirySeconds(0), 29 * 86_400).default(DEFAULT_ORDER_TIMING.lockExpirySeconds),
    /**
     * Seconds a party has to send an unlock that is due before the relayer's keeper sends it for it
     * (judged on the target chain's clock; the keeper never waits past the side's window closing).
     */
    KEEPER_UNLOCK_AFTER_SECONDS: intFromEnv(0, 7 * 86_400).default(DEFAULT_KEEPER_UNLOCK_AFTER_SECONDS),
    /** Open unfunded reservations (trades awaiting their deposit) one wallet may hold, on all ads together. */
    MAX_OPEN_RESERVATIONS_PER_WALLET: intFromEnv(1, 10_000).default(3),
    /** Open unfunded reservations one ad may carry, from all wallets together. */
    MAX_OPEN_RESERVATIONS_PER_AD: intFromEnv(1, 100_000).default(20),
    /**
     * At most one re-read of an ad's reservations (trades/use-cases/unbacked-reservations.ts) per this many
     * seconds per ad and API process; requests meanwhile share the one running. 0: every request that
     * finds the ad taken re-reads (concurrent ones still share).
     */
    UNBACKED_RESERVATIONS_RECHECK_SECONDS: intFromEnv(0, 3600).default(10),
    /**
     * How often the trade start reconciler (in the worker on Temporal, in the API on the embedded
     * runner) starts trades whose reservation committed but whose lifecycle did not start; also how
     * long a new trade's start is left to its own request first. 0: only at process start.
     */
    TRADE_START_RECONCILE_SECONDS: intFromEnv(0, 3600).default(10),
    /**
     * Ads one user may have PENDING (create signed, not yet confirmed on chain, not expired); beyond
     * it `POST /v1/ads/create` answers 429 naming the limit and records nothing.
     */
    MAX_PENDING_ADS_PER_USER: intFromEnv(1, 10_000).default(20),
    /**
     * Unsettled ad requests (create, fund, withdraw, close: PENDING until confirmed or settled) one
     * user may have on all their ads; beyond it those endpoints answer 429 naming the limit.
     */
    MAX_OPEN_AD_REQUESTS_PER_USER: intFromEnv(1, 100_000).default(50),
    /** EIP-712 domain name and version the contracts are deployed with. */
    EIP712_DOMAIN_NAME: z.string().min(1).default('ProofBridge'),
    EIP712_DOMAIN_VERSION: z.string().min(1).default('1'),
  }),
  check(config, ctx) {
    // The contracts refuse a lock with less than their minimum unlock window left before lockExpiry:
    // a deposit made at its request's deadline must still leave room to lock.
    const depositTtl = depositTtlSeconds({
      signedRequestTtlSeconds: config.SIGNED_REQUEST_TTL_SECONDS, reservationTtlSeconds: config.TRADE_RESERVATION_TTL_SECONDS,
    });
    if (config.ORDER_LOCK_EXPIRY_SECONDS < minLockExpirySeconds(depositTtl)) {
      ctx.addIssue({
        code: 'custom', path: ['ORDER_LOCK_EXPIRY_SECONDS'],
        message: `must exceed the deposit request's TTL (${depositTtl} s) plus ${minLockExpirySeconds(0) - 1} s`,
      });
    }
  },
});
