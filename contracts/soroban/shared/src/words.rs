//! Values as the 32-byte words signed requests and the order hash use (chains/README.md).
use soroban_sdk::{address_payload::AddressPayload, Address, Bytes, BytesN, Env, U256};

use crate::Error;

/// The word of a Soroban address: the ed25519 key of a G... account or the hash of a C... contract.
pub fn address_word(address: &Address) -> BytesN<32> {
    match address.to_payload() {
        Some(AddressPayload::AccountIdPublicKeyEd25519(key)) => key,
        Some(AddressPayload::ContractIdHash(hash)) => hash,
        None => panic!("unsupported address type"),
    }
}

/// The address a word names on this chain: the contract with that id when one exists, else the
/// account with that key (a key equal to a contract id would need a SHA-256 preimage).
pub fn word_address(env: &Env, word: &BytesN<32>) -> Address {
    let contract = Address::from_payload(env, AddressPayload::ContractIdHash(word.clone()));
    if contract.exists() {
        contract
    } else {
        Address::from_payload(env, AddressPayload::AccountIdPublicKeyEd25519(word.clone()))
    }
}

/// A non-negative i128 amount as a uint256 word; negative amounts are refused.
pub fn amount_word(amount: i128) -> Result<[u8; 32], Error> {
    if amount < 0 {
        return Err(Error::InvalidAmount);
    }
    let mut out = [0u8; 32];
    out[16..].copy_from_slice(&amount.to_be_bytes());
    Ok(out)
}

/// A u64 (deadline, chain id) as a uint256 word.
pub fn u64_word(value: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    out[24..].copy_from_slice(&value.to_be_bytes());
    out
}

/// Appends words to a message under construction.
pub trait WordSink {
    /// Appends a 32-byte word given as bytes.
    fn push_array(&mut self, word: &[u8; 32]);
    /// Appends a BytesN<32>.
    fn push_bytesn(&mut self, word: &BytesN<32>);
    /// Appends a U256 as 32 big-endian bytes.
    fn push_u256(&mut self, value: &U256);
}

impl WordSink for Bytes {
    fn push_array(&mut self, word: &[u8; 32]) {
        self.extend_from_array(word);
    }
    fn push_bytesn(&mut self, word: &BytesN<32>) {
        self.append(&Bytes::from(word.clone()));
    }
    fn push_u256(&mut self, value: &U256) {
        self.append(&value.to_be_bytes());
    }
}
