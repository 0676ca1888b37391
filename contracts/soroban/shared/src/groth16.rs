//! Groth16 verification of the deposit circuit's proof with the BN254 host functions, against the
//! committed verification key (params.rs, from circuits/build/verification_key.json).
use soroban_sdk::{
    crypto::bn254::{Bn254G1Affine, Bn254G2Affine, Fr},
    vec, Bytes, Env, U256,
};

use crate::params::*;
use crate::poseidon::is_field;
use crate::Error;

/// Bytes of a proof: `pA ‖ pB ‖ pC`, the `abi.encode(uint256[2], uint256[2][2], uint256[2])` of
/// prover/solidity.ts `encodeProof` (G2 already `x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0`), which is also the
/// host's point encoding, so the EVM contracts and these take the same bytes.
pub const PROOF_LEN: u32 = 256;

fn g1(env: &Env, bytes: &Bytes) -> Bn254G1Affine {
    let mut out = [0u8; 64];
    bytes.copy_into_slice(&mut out);
    Bn254G1Affine::from_array(env, &out)
}

fn g2(env: &Env, bytes: &Bytes) -> Bn254G2Affine {
    let mut out = [0u8; 128];
    bytes.copy_into_slice(&mut out);
    Bn254G2Affine::from_array(env, &out)
}

/// A Groth16 verification key as host-encoded BN254 points (G1 `x ‖ y`, G2 `x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0`).
pub struct VerificationKey<'a> {
    pub alpha: &'a [u8; 64],
    pub beta: &'a [u8; 128],
    pub gamma: &'a [u8; 128],
    pub delta: &'a [u8; 128],
    /// One point per public signal, plus one.
    pub ic: &'a [[u8; 64]; 5],
}

/// The key compiled into the contracts (params.rs, generated from circuits/build/verification_key.json).
pub const COMMITTED_KEY: VerificationKey<'static> =
    VerificationKey { alpha: &VK_ALPHA_G1, beta: &VK_BETA_G2, gamma: &VK_GAMMA_G2, delta: &VK_DELTA_G2, ic: &VK_IC };

/// The committed key's bytes, `alpha ‖ beta ‖ gamma ‖ delta ‖ IC[0..5]` (768 bytes): what the
/// contracts' `verification_key` view returns, so the service can check at start-up that the
/// deployed contract verifies with the key it proves with (chains/deployed-verifiers.ts).
pub fn committed_key_bytes(env: &Env) -> Bytes {
    let mut out = Bytes::from_array(env, &VK_ALPHA_G1);
    out.extend_from_array(&VK_BETA_G2);
    out.extend_from_array(&VK_GAMMA_G2);
    out.extend_from_array(&VK_DELTA_G2);
    for point in VK_IC.iter() {
        out.extend_from_array(point);
    }
    out
}

/// True when `proof` proves the circuit for the public signals `[root, orderHashHi, orderHashLo,
/// nullifierHash]`. Signals at or above the field modulus are refused (`NotAField`): the host
/// would reduce them, letting `nullifier + r` pass as a second nullifier. Points not on the curve
/// (or G2 points outside the subgroup) trap in the host.
pub fn verify(env: &Env, proof: &Bytes, signals: [&U256; 4]) -> Result<bool, Error> {
    verify_with(env, &COMMITTED_KEY, proof, signals)
}

/// `verify` against any key of this circuit's shape (the ceremony's test verifies a new key's
/// proofs in the host with it before anything is rebuilt).
pub fn verify_with(env: &Env, key: &VerificationKey, proof: &Bytes, signals: [&U256; 4]) -> Result<bool, Error> {
    if proof.len() != PROOF_LEN {
        return Ok(false);
    }
    for s in signals {
        if !is_field(env, s) {
            return Err(Error::NotAField);
        }
    }
    let a = g1(env, &proof.slice(0..64));
    let b = g2(env, &proof.slice(64..192));
    let c = g1(env, &proof.slice(192..256));

    let bn = env.crypto().bn254();
    let mut vk_x = Bn254G1Affine::from_array(env, &key.ic[0]);
    for (i, s) in signals.iter().enumerate() {
        let term = bn.g1_mul(&Bn254G1Affine::from_array(env, &key.ic[i + 1]), &Fr::from((*s).clone()));
        vk_x = bn.g1_add(&vk_x, &term);
    }
    // e(-A, B) · e(alpha, beta) · e(vk_x, gamma) · e(C, delta) == 1
    let g1s = vec![env, -a, Bn254G1Affine::from_array(env, key.alpha), vk_x, c];
    let g2s = vec![
        env,
        b,
        Bn254G2Affine::from_array(env, key.beta),
        Bn254G2Affine::from_array(env, key.gamma),
        Bn254G2Affine::from_array(env, key.delta),
    ];
    Ok(bn.pairing_check(g1s, g2s))
}

