//! snarkjs's JSON forms: decimal strings, projective-looking affine points (`[x, y, "1"]`).

use ark_bn254::{Fq2, G1Affine, G2Affine};
use ark_ec::AffineRepr;
use ark_ff::PrimeField;
use num_bigint::BigUint;
use serde_json::{json, Value};

use crate::prove::Proof;
use crate::zkey::ProvingKey;

/// A field element as snarkjs prints it: its integer value in decimal.
pub fn decimal<F: PrimeField<BigInt = ark_ff::BigInt<4>>>(x: F) -> String {
    BigUint::from(x.into_bigint()).to_string()
}

fn fq2(x: &Fq2) -> Value {
    json!([decimal(x.c0), decimal(x.c1)])
}

/// `[x, y, "1"]`, or snarkjs's `["0", "1", "0"]` for the point at infinity.
pub fn g1(p: &G1Affine) -> Value {
    match p.xy() {
        Some((x, y)) => json!([decimal(x), decimal(y), "1"]),
        None => json!(["0", "1", "0"]),
    }
}

/// `[[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]`, or `[["0","0"],["1","0"],["0","0"]]` at infinity.
pub fn g2(p: &G2Affine) -> Value {
    match p.xy() {
        Some((x, y)) => json!([fq2(&x), fq2(&y), ["1", "0"]]),
        None => json!([["0", "0"], ["1", "0"], ["0", "0"]]),
    }
}

/// The proof object `snarkjs.groth16.prove` returns.
pub fn proof(p: &Proof) -> Value {
    json!({ "pi_a": g1(&p.a), "pi_b": g2(&p.b), "pi_c": g1(&p.c), "protocol": "groth16", "curve": "bn128" })
}

/// The verification key as read from the zkey, in `snarkjs zkey export verificationkey` form
/// (without the precomputed `vk_alphabeta_12`), so it can be compared with the committed one.
pub fn verification_key(key: &ProvingKey) -> Value {
    json!({
        "protocol": "groth16",
        "curve": "bn128",
        "nPublic": key.n_public,
        "vk_alpha_1": g1(&key.alpha_g1),
        "vk_beta_2": g2(&key.beta_g2),
        "vk_gamma_2": g2(&key.gamma_g2),
        "vk_delta_2": g2(&key.delta_g2),
        "IC": key.ic.iter().map(g1).collect::<Vec<_>>(),
    })
}
