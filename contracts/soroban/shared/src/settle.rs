//! Settlement proofs: one nullifier per trade, spent once per contract, with the Groth16 proof.
use soroban_sdk::{contracttype, Bytes, BytesN, Env, U256};

use crate::{groth16, order, Error};

#[contracttype]
enum NullifierKey {
    Spent(U256),
}

/// True when the nullifier was spent on this contract.
pub fn is_spent(env: &Env, nullifier_hash: &U256) -> bool {
    env.storage().persistent().has(&NullifierKey::Spent(nullifier_hash.clone()))
}

/// Verifies the proof for (root, orderHash, nullifier) and spends the nullifier (as
/// RelayerRequests.sol `_spendWithProof`): a spent nullifier is refused before the proof is read.
pub fn spend_with_proof(
    env: &Env,
    order_hash: &BytesN<32>,
    root: &U256,
    nullifier_hash: &U256,
    proof: &Bytes,
) -> Result<(), Error> {
    if is_spent(env, nullifier_hash) {
        return Err(Error::NullifierSpent);
    }
    let (hi, lo) = order::split(env, order_hash);
    if !groth16::verify(env, proof, [root, &hi, &lo, nullifier_hash])? {
        return Err(Error::InvalidProof);
    }
    env.storage().persistent().set(&NullifierKey::Spent(nullifier_hash.clone()), &true);
    Ok(())
}
