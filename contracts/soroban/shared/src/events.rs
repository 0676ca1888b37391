//! The events chains/stellar reads (chains/stellar/events.ts): topics `[Symbol(name), BytesN<32>
//! reqHash, BytesN<32> adId | orderHash]`, data a map of Symbol to value for the other fields, named
//! as the EVM events' arguments (so the map keys are camelCase). Amounts are i128, tree values U256.
//! OrderRefunded and LockReleased answer no relayer request: their topics are `[Symbol(name),
//! BytesN<32> orderHash]` only, so they never read as a request's receipt.
#![allow(non_snake_case)]
use soroban_sdk::{contractevent, Address, BytesN, U256};

/// AdManager.create_ad.
#[contractevent(topics = ["AdCreated"], data_format = "map")]
pub struct AdCreated {
    #[topic]
    pub reqHash: BytesN<32>,
    #[topic]
    pub adId: BytesN<32>,
    pub creator: Address,
    pub token: Address,
    pub amount: i128,
    pub orderChainId: U256,
    pub adRecipient: BytesN<32>,
}

/// AdManager.fund_ad.
#[contractevent(topics = ["AdFunded"], data_format = "map")]
pub struct AdFunded {
    #[topic]
    pub reqHash: BytesN<32>,
    #[topic]
    pub adId: BytesN<32>,
    pub amount: i128,
    pub available: i128,
}

/// AdManager.withdraw_from_ad.
#[contractevent(topics = ["AdWithdrawn"], data_format = "map")]
pub struct AdWithdrawn {
    #[topic]
    pub reqHash: BytesN<32>,
    #[topic]
    pub adId: BytesN<32>,
    pub amount: i128,
    pub to: Address,
}

/// AdManager.close_ad.
#[contractevent(topics = ["AdClosed"], data_format = "map")]
pub struct AdClosed {
    #[topic]
    pub reqHash: BytesN<32>,
    #[topic]
    pub adId: BytesN<32>,
    pub amount: i128,
    pub to: Address,
}

/// AdManager.lock_for_order.
#[contractevent(topics = ["OrderLocked"], data_format = "map")]
pub struct OrderLocked {
    #[topic]
    pub reqHash: BytesN<32>,
    #[topic]
    pub orderHash: BytesN<32>,
    pub adId: BytesN<32>,
    pub amount: i128,
}

/// OrderPortal.create_order: what the service checks on confirm and mirrors into its tree.
#[contractevent(topics = ["OrderCreated"], data_format = "map")]
pub struct OrderCreated {
    #[topic]
    pub reqHash: BytesN<32>,
    #[topic]
    pub orderHash: BytesN<32>,
    pub leafIndex: u32,
    pub leaf: U256,
    pub secretCommitment: U256,
    pub root: U256,
}

/// AdManager.unlock and OrderPortal.unlock.
#[contractevent(topics = ["OrderUnlocked"], data_format = "map")]
pub struct OrderUnlocked {
    #[topic]
    pub reqHash: BytesN<32>,
    #[topic]
    pub orderHash: BytesN<32>,
    pub nullifierHash: U256,
    pub recipient: Address,
    pub amount: i128,
}

/// OrderPortal.refund: a deposit never unlocked went back to the Bridger.
#[contractevent(topics = ["OrderRefunded"], data_format = "map")]
pub struct OrderRefunded {
    #[topic]
    pub orderHash: BytesN<32>,
    pub recipient: Address,
    pub amount: i128,
}

/// AdManager.release_lock: a lock never unlocked went back to the ad (to the Maker if the ad is closed).
#[contractevent(topics = ["LockReleased"], data_format = "map")]
pub struct LockReleased {
    #[topic]
    pub orderHash: BytesN<32>,
    pub adId: BytesN<32>,
    pub amount: i128,
}

/// Both contracts' `rotate_relayer`: the new key signs from now on, the previous one is accepted
/// until `previousUntil` (ledger seconds). Topics `[Symbol("RelayerRotated")]` only: no request's receipt.
#[contractevent(topics = ["RelayerRotated"], data_format = "map")]
pub struct RelayerRotated {
    pub previous: BytesN<32>,
    pub current: BytesN<32>,
    pub previousUntil: u64,
}

/// Both contracts' `set_previous_relayer_until`: the grace period of the previous key now ends at `previousUntil`.
#[contractevent(topics = ["PreviousRelayerGraceSet"], data_format = "map")]
pub struct PreviousRelayerGraceSet {
    pub previous: BytesN<32>,
    pub previousUntil: u64,
}
