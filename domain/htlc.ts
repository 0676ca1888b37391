/**
 * The hash time-lock rule the reference contracts enforce, as vocabulary: the chain adapters sign
 * and check order times against it, and the trade lifecycle derives its windows from it
 * (trades/lifecycle/windows.ts). Two times travel in an order (and so in its hash): lockExpiry on
 * the ad chain, refundTime on the order chain.
 */

/** The limits the reference contracts enforce (RelayerRequests.sol constants), in seconds. */
export const HTLC_LIMITS = {
  /** A lock is refused when fewer than this many seconds remain until lockExpiry. */
  minUnlockWindowSeconds: 3_600,
  /** refundTime - lockExpiry is at least this. */
  minRefundMarginSeconds: 3_600,
  /** refundTime is at most this far ahead at createOrder and at lockForOrder. */
  maxOrderLifetimeSeconds: 30 * 86_400,
} as const;

/** How far apart the service places an order's times (config-like; seconds). */
export interface OrderTimingPolicy {
  /** From the order's creation (when the createOrder request is signed) to lockExpiry. */
  lockExpirySeconds: number;
  /** From lockExpiry to refundTime: the Maker's time to claim after the Bridger's last chance. */
  refundMarginSeconds: number;
}

/** Six hours for deposit, lock, proof and the Bridger's unlock; six more for the Maker's. */
export const DEFAULT_ORDER_TIMING: OrderTimingPolicy = { lockExpirySeconds: 6 * 3_600, refundMarginSeconds: 6 * 3_600 };
