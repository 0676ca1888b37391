//! The chain-independent order hash (chains/order.ts): the EIP-712 digest of `Order` under the
//! domain {name, version}, computed with the host's keccak256 so it equals the EVM contracts'.
use soroban_sdk::{contracttype, Bytes, BytesN, Env, U256};

use crate::words::{amount_word, u64_word, WordSink};
use crate::Error;

const ORDER_TYPE: &str = "Order(bytes32 orderChainToken,bytes32 adChainToken,uint256 orderAmount,uint256 adAmount,bytes32 bridger,bytes32 orderRecipient,bytes32 adId,bytes32 adCreator,bytes32 adRecipient,uint256 salt,uint256 orderChainId,bytes32 orderPortal,uint256 adChainId,bytes32 adManager,uint256 lockExpiry,uint256 refundTime)";
const DOMAIN_TYPE: &str = "EIP712Domain(string name,string version)";

/// The order both chains agree on, field for field the `Order` struct of chains/order.ts.
/// Addresses are 32-byte words (EVM: left-padded; Stellar: account key or contract id), `ad_id`
/// the ad's UUID left-padded; `order_amount` is what the OrderPortal moves (the order token's smallest
/// unit) and `ad_amount` what the AdManager moves (the ad token's), each an i128 as a Soroban token
/// moves it and both hashed, so neither chain moves the other's number; the two times are unix
/// seconds (the ledger's u64 clock), hashed as uint256 words (chains/timing.ts).
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Order {
    pub order_chain_token: BytesN<32>,
    pub ad_chain_token: BytesN<32>,
    pub order_amount: i128,
    pub ad_amount: i128,
    pub bridger: BytesN<32>,
    pub order_recipient: BytesN<32>,
    pub ad_id: BytesN<32>,
    pub ad_creator: BytesN<32>,
    pub ad_recipient: BytesN<32>,
    pub salt: U256,
    pub order_chain_id: U256,
    pub order_portal: BytesN<32>,
    pub ad_chain_id: U256,
    pub ad_manager: BytesN<32>,
    /// Ad chain: the Bridger's unlock is accepted while now < lock_expiry; from then on the Maker may release the lock.
    pub lock_expiry: u64,
    /// Order chain: the Maker's unlock is accepted while now < refund_time; from then on the Bridger may refund.
    pub refund_time: u64,
}

fn keccak(env: &Env, data: &Bytes) -> BytesN<32> {
    env.crypto().keccak256(data).into()
}

/// keccak256(abi.encode(keccak256("EIP712Domain(string name,string version)"), keccak256(name), keccak256(version))).
pub fn order_domain(env: &Env, name: &Bytes, version: &Bytes) -> BytesN<32> {
    let mut encoded = Bytes::new(env);
    encoded.push_bytesn(&keccak(env, &Bytes::from_slice(env, DOMAIN_TYPE.as_bytes())));
    encoded.push_bytesn(&keccak(env, name));
    encoded.push_bytesn(&keccak(env, version));
    keccak(env, &encoded)
}

/// keccak256(0x1901 ‖ orderDomain ‖ keccak256(ORDER_TYPEHASH ‖ the 16 words of the order)).
pub fn order_hash(env: &Env, domain: &BytesN<32>, o: &Order) -> Result<BytesN<32>, Error> {
    let mut encoded = Bytes::new(env);
    encoded.push_bytesn(&keccak(env, &Bytes::from_slice(env, ORDER_TYPE.as_bytes())));
    encoded.push_bytesn(&o.order_chain_token);
    encoded.push_bytesn(&o.ad_chain_token);
    encoded.push_array(&amount_word(o.order_amount)?);
    encoded.push_array(&amount_word(o.ad_amount)?);
    encoded.push_bytesn(&o.bridger);
    encoded.push_bytesn(&o.order_recipient);
    encoded.push_bytesn(&o.ad_id);
    encoded.push_bytesn(&o.ad_creator);
    encoded.push_bytesn(&o.ad_recipient);
    encoded.push_u256(&o.salt);
    encoded.push_u256(&o.order_chain_id);
    encoded.push_bytesn(&o.order_portal);
    encoded.push_u256(&o.ad_chain_id);
    encoded.push_bytesn(&o.ad_manager);
    encoded.push_array(&u64_word(o.lock_expiry));
    encoded.push_array(&u64_word(o.refund_time));
    let mut digest = Bytes::from_array(env, &[0x19, 0x01]);
    digest.push_bytesn(domain);
    digest.push_bytesn(&keccak(env, &encoded));
    Ok(keccak(env, &digest))
}

/// The circuit's public halves of an order hash: (hash >> 128, hash mod 2^128).
pub fn split(env: &Env, hash: &BytesN<32>) -> (U256, U256) {
    let bytes = hash.to_array();
    let mut hi = [0u8; 32];
    let mut lo = [0u8; 32];
    hi[16..].copy_from_slice(&bytes[..16]);
    lo[16..].copy_from_slice(&bytes[16..]);
    (
        U256::from_be_bytes(env, &Bytes::from_array(env, &hi)),
        U256::from_be_bytes(env, &Bytes::from_array(env, &lo)),
    )
}
