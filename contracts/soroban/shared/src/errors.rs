use soroban_sdk::contracterror;

/// Every way a call to AdManager or OrderPortal is refused (the EVM contracts' custom errors).
/// A signature that does not verify under the named signer is not listed: the host's
/// `ed25519_verify` traps the call itself.
#[contracterror]
#[derive(Copy, Clone, Debug, Eq, PartialEq, PartialOrd, Ord)]
#[repr(u32)]
pub enum Error {
    /// The ledger time is past the request's deadline.
    RequestExpired = 1,
    /// The request's authToken was already used on this contract.
    AuthTokenUsed = 2,
    /// The order names another chain id or another contract.
    NotForThisContract = 3,
    AdExists = 4,
    UnknownAd = 5,
    NotAdCreator = 6,
    AdIsClosed = 7,
    InsufficientLiquidity = 8,
    /// The order does not match the ad or the caller.
    OrderMismatch = 9,
    /// The order is not in the state the call needs (already deposited, not locked, already unlocked).
    WrongOrderState = 10,
    /// The proof's root is not one of the portal's recent roots.
    UnknownRoot = 11,
    NullifierSpent = 12,
    InvalidProof = 13,
    /// A value meant to be a BN254 scalar field element is not below the field modulus.
    NotAField = 14,
    /// A negative amount.
    InvalidAmount = 15,
    TreeFull = 16,
    /// The order's times are not those of a hash time-lock (times.rs: unlock window, refund margin, lifetime).
    InvalidTimes = 17,
    /// A refund or release before the order's time.
    TooEarly = 18,
    /// An unlock at or after the order's time (the refund or release is the only way out then).
    TooLate = 19,
    /// The request names a signer that is neither the current relayer key nor the previous one
    /// within its grace period (a retired key, or anybody's).
    InvalidSignature = 20,
}
