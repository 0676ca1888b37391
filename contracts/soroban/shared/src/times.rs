//! The hash time-lock rule of an order, as RelayerRequests.sol `_checkTimes` and chains/timing.ts
//! (HTLC_LIMITS) state it (devnet/README.md "Timeouts").
use soroban_sdk::Env;

use crate::{Error, Order};

/// The Bridger's shortest time to unlock on the ad chain: a lock is refused later than lock_expiry - this.
pub const MIN_UNLOCK_WINDOW: u64 = 3_600;
/// The Maker's shortest time to unlock on the order chain after the Bridger's last chance (lock_expiry).
pub const MIN_REFUND_MARGIN: u64 = 3_600;
/// No order keeps a deposit longer than this: refund_time is at most this far ahead at creation and lock.
pub const MAX_ORDER_LIFETIME: u64 = 30 * 86_400;

/// The ledger's unix time.
pub fn now(env: &Env) -> u64 {
    env.ledger().timestamp()
}

/// `InvalidTimes` unless lock_expiry leaves the Bridger MIN_UNLOCK_WINDOW from now, refund_time
/// leaves the Maker MIN_REFUND_MARGIN after lock_expiry, and refund_time is within
/// MAX_ORDER_LIFETIME of now. Checked at create_order and again at lock_for_order.
pub fn check_times(env: &Env, o: &Order) -> Result<(), Error> {
    let now = now(env);
    // Saturating: a time near u64::MAX must be refused, never wrap into acceptance.
    if o.lock_expiry < now.saturating_add(MIN_UNLOCK_WINDOW)
        || o.refund_time < o.lock_expiry.saturating_add(MIN_REFUND_MARGIN)
        || o.refund_time > now.saturating_add(MAX_ORDER_LIFETIME)
    {
        return Err(Error::InvalidTimes);
    }
    Ok(())
}

/// `TooLate` from `time` on: an unlock is accepted strictly before it, so at `time` itself only the
/// refund or release is possible, never both.
pub fn before(env: &Env, time: u64) -> Result<(), Error> {
    if now(env) >= time {
        return Err(Error::TooLate);
    }
    Ok(())
}

/// `TooEarly` before `time`: a refund or release is accepted from `time` on.
pub fn from(env: &Env, time: u64) -> Result<(), Error> {
    if now(env) < time {
        return Err(Error::TooEarly);
    }
    Ok(())
}
