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

/// True when `proof` proves the circuit for the public signals `[root, orderHashHi, orderHashLo,
/// nullifierHash]`. Signals at or above the field modulus are refused (`NotAField`): the host
/// would reduce them, letting `nullifier + r` pass as a second nullifier. Points not on the curve
/// (or G2 points outside the subgroup) trap in the host.
pub fn verify(env: &Env, proof: &Bytes, signals: [&U256; 4]) -> Result<bool, Error> {
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
    let mut vk_x = Bn254G1Affine::from_array(env, &VK_IC[0]);
    for (i, s) in signals.iter().enumerate() {
        let term = bn.g1_mul(&Bn254G1Affine::from_array(env, &VK_IC[i + 1]), &Fr::from((*s).clone()));
        vk_x = bn.g1_add(&vk_x, &term);
    }
    // e(-A, B) · e(alpha, beta) · e(vk_x, gamma) · e(C, delta) == 1
    let g1s = vec![env, -a, Bn254G1Affine::from_array(env, &VK_ALPHA_G1), vk_x, c];
    let g2s = vec![
        env,
        b,
        Bn254G2Affine::from_array(env, &VK_BETA_G2),
        Bn254G2Affine::from_array(env, &VK_GAMMA_G2),
        Bn254G2Affine::from_array(env, &VK_DELTA_G2),
    ];
    Ok(bn.pairing_check(g1s, g2s))
}

