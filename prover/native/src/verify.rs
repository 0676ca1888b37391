//! Groth16 verification (BN254) with a prepared key, as `snarkjs.groth16.verify` and
//! `Verifier.sol` decide it: e(A, B) = e(α, β) · e(Σ xᵢ·ICᵢ, γ) · e(C, δ).
//!
//! Prepared once from snarkjs's `verification_key.json`: e(α, β) as a target-group element and
//! −γ, −δ as prepared G2 points, so a proof costs one multi-Miller loop over three pairs and one
//! final exponentiation (about a millisecond). Inputs are checked as the contracts would: every
//! coordinate below the base field's modulus, every point on its curve and in the prime-order
//! subgroup, every public signal below the scalar field's modulus. A malformed proof or key is an
//! error; a well-formed proof that does not verify is `Ok(false)`.

use ark_bn254::{Bn254, Fq, Fq2, Fr, G1Affine, G1Projective, G2Affine};
use ark_ec::pairing::{Pairing, PairingOutput};
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::{BigInt, One, PrimeField, Zero};
use num_bigint::BigUint;
use serde_json::Value;

/// A verification key ready to check many proofs.
pub struct PreparedVerifier {
    alpha_beta: PairingOutput<Bn254>,
    gamma_neg: <Bn254 as Pairing>::G2Prepared,
    delta_neg: <Bn254 as Pairing>::G2Prepared,
    ic: Vec<G1Affine>,
}

/// A proof as snarkjs writes it, parsed and checked.
pub struct ParsedProof {
    pub a: G1Affine,
    pub b: G2Affine,
    pub c: G1Affine,
}

fn field<F: PrimeField<BigInt = BigInt<4>>>(value: &Value, what: &str) -> Result<F, String> {
    let text = value.as_str().ok_or_else(|| format!("{what} must be a decimal string"))?;
    let n = BigUint::parse_bytes(text.as_bytes(), 10).filter(|_| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()));
    let n = n.ok_or_else(|| format!("{what} must be a decimal string, received '{}'", text.chars().take(80).collect::<String>()))?;
    BigInt::<4>::try_from(n).ok().and_then(F::from_bigint).ok_or_else(|| format!("{what} is not below the field's modulus"))
}

fn array<'a>(value: &'a Value, len: usize, what: &str) -> Result<&'a [Value], String> {
    match value.as_array() {
        Some(items) if items.len() == len => Ok(items),
        _ => Err(format!("{what} must be an array of {len}")),
    }
}

fn fq2(value: &Value, what: &str) -> Result<Fq2, String> {
    let [c0, c1] = array(value, 2, what)? else { unreachable!() };
    Ok(Fq2::new(field(c0, what)?, field(c1, what)?))
}

/// snarkjs's `[x, y, "1"]` (or `["0", "1", "0"]`, the point at infinity), on the curve.
pub fn g1(value: &Value, what: &str) -> Result<G1Affine, String> {
    let [x, y, z] = array(value, 3, what)? else { unreachable!() };
    let (x, y, z): (Fq, Fq, Fq) = (field(x, what)?, field(y, what)?, field(z, what)?);
    if z.is_zero() && x.is_zero() && y.is_one() {
        return Ok(G1Affine::zero());
    }
    if !z.is_one() {
        return Err(format!("{what} must be affine (z = 1)"));
    }
    let p = G1Affine::new_unchecked(x, y);
    // BN254's G1 has cofactor 1: on the curve is in the group.
    if !p.is_on_curve() {
        return Err(format!("{what} is not on the BN254 G1 curve"));
    }
    Ok(p)
}

/// snarkjs's `[[x0, x1], [y0, y1], ["1", "0"]]` (or `[["0","0"],["1","0"],["0","0"]]`), on the
/// curve and in the prime-order subgroup (G2's cofactor is not 1: a point outside it would break
/// the pairing's soundness).
pub fn g2(value: &Value, what: &str) -> Result<G2Affine, String> {
    let [x, y, z] = array(value, 3, what)? else { unreachable!() };
    let (x, y, z) = (fq2(x, what)?, fq2(y, what)?, fq2(z, what)?);
    if z.is_zero() && x.is_zero() && y.is_one() {
        return Ok(G2Affine::zero());
    }
    if !z.is_one() {
        return Err(format!("{what} must be affine (z = [1, 0])"));
    }
    let p = G2Affine::new_unchecked(x, y);
    if !p.is_on_curve() {
        return Err(format!("{what} is not on the BN254 G2 curve"));
    }
    if !p.is_in_correct_subgroup_assuming_on_curve() {
        return Err(format!("{what} is not in the BN254 G2 subgroup"));
    }
    Ok(p)
}

/// The proof object `snarkjs.groth16.prove` returns (`pi_a`, `pi_b`, `pi_c`).
pub fn proof(value: &Value) -> Result<ParsedProof, String> {
    let get = |name: &str| value.get(name).ok_or_else(|| format!("proof has no '{name}'"));
    Ok(ParsedProof { a: g1(get("pi_a")?, "pi_a")?, b: g2(get("pi_b")?, "pi_b")?, c: g1(get("pi_c")?, "pi_c")? })
}

/// Public signals as decimal strings, each below the scalar field's modulus.
pub fn public_signals(value: &Value) -> Result<Vec<Fr>, String> {
    let items = value.as_array().ok_or("publicSignals must be an array")?;
    items.iter().enumerate().map(|(i, s)| field::<Fr>(s, &format!("publicSignals[{i}]"))).collect()
}

impl PreparedVerifier {
    /// Prepares snarkjs's `verification_key.json` (Groth16 on bn128).
    pub fn from_json(key: &Value) -> Result<Self, String> {
        if key.get("protocol").and_then(Value::as_str) != Some("groth16") || key.get("curve").and_then(Value::as_str) != Some("bn128") {
            return Err("verification key is not groth16 on bn128".into());
        }
        let get = |name: &str| key.get(name).ok_or_else(|| format!("verification key has no '{name}'"));
        let alpha = g1(get("vk_alpha_1")?, "vk_alpha_1")?;
        let beta = g2(get("vk_beta_2")?, "vk_beta_2")?;
        let gamma = g2(get("vk_gamma_2")?, "vk_gamma_2")?;
        let delta = g2(get("vk_delta_2")?, "vk_delta_2")?;
        let ic = get("IC")?.as_array().ok_or("verification key's IC must be an array")?;
        let ic = ic.iter().enumerate().map(|(i, p)| g1(p, &format!("IC[{i}]"))).collect::<Result<Vec<_>, _>>()?;
        if ic.is_empty() {
            return Err("verification key's IC is empty".into());
        }
        Ok(Self {
            alpha_beta: Bn254::pairing(alpha, beta),
            gamma_neg: (-gamma).into(),
            delta_neg: (-delta).into(),
            ic,
        })
    }

    /// Public signals the key expects.
    pub fn n_public(&self) -> usize {
        self.ic.len() - 1
    }

    /// True when the proof verifies for these public signals.
    pub fn verify(&self, proof: &ParsedProof, public: &[Fr]) -> Result<bool, String> {
        if public.len() != self.n_public() {
            return Err(format!("expected {} public signals, received {}", self.n_public(), public.len()));
        }
        let mut vk_x: G1Projective = self.ic[0].into_group();
        for (x, base) in public.iter().zip(&self.ic[1..]) {
            vk_x += *base * x;
        }
        let miller = Bn254::multi_miller_loop(
            [proof.a, vk_x.into_affine(), proof.c],
            [proof.b.into(), self.gamma_neg.clone(), self.delta_neg.clone()],
        );
        Ok(Bn254::final_exponentiation(miller).is_some_and(|out| out == self.alpha_beta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::short_weierstrass::SWCurveConfig;
    use ark_ff::{Field, UniformRand};
    use rand::rngs::OsRng;
    use serde_json::json;

    use crate::json as snarkjs;

    fn committed_key() -> Value {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../circuits/build/verification_key.json");
        serde_json::from_str(&std::fs::read_to_string(path).expect("circuits/build/verification_key.json")).unwrap()
    }

    /// A proof made here with a toy key (α, β, γ, δ and IC chosen, the proof solved for), so the
    /// pairing equation is exercised without the circuit: A = a·G1, B = b·G2, C chosen so that
    /// a·b = α·β + vk_x·γ + c·δ in the exponent.
    fn toy() -> (Value, Value, Vec<String>) {
        let mut rng = OsRng;
        let (g1, g2) = (G1Affine::generator(), G2Affine::generator());
        let [alpha, beta, gamma, delta, ic0, ic1, x, a, b] = std::array::from_fn(|_| Fr::rand(&mut rng));
        let vk_x = ic0 + ic1 * x;
        let c = (a * b - alpha * beta - vk_x * gamma) / delta;
        let key = json!({
            "protocol": "groth16", "curve": "bn128", "nPublic": 1,
            "vk_alpha_1": snarkjs::g1(&(g1 * alpha).into_affine()), "vk_beta_2": snarkjs::g2(&(g2 * beta).into_affine()),
            "vk_gamma_2": snarkjs::g2(&(g2 * gamma).into_affine()), "vk_delta_2": snarkjs::g2(&(g2 * delta).into_affine()),
            "IC": [snarkjs::g1(&(g1 * ic0).into_affine()), snarkjs::g1(&(g1 * ic1).into_affine())],
        });
        let proof = json!({ "pi_a": snarkjs::g1(&(g1 * a).into_affine()), "pi_b": snarkjs::g2(&(g2 * b).into_affine()), "pi_c": snarkjs::g1(&(g1 * c).into_affine()) });
        (key, proof, vec![snarkjs::decimal(x)])
    }

    fn check(key: &Value, proof_json: &Value, public: &[String]) -> Result<bool, String> {
        let verifier = PreparedVerifier::from_json(key)?;
        verifier.verify(&proof(proof_json)?, &public_signals(&json!(public))?)
    }

    #[test]
    fn accepts_a_proof_that_satisfies_the_equation() {
        let (key, proof, public) = toy();
        assert_eq!(check(&key, &proof, &public), Ok(true));
    }

    #[test]
    fn refuses_a_changed_public_signal_or_swapped_points() {
        let (key, mut proof, public) = toy();
        let other = vec![snarkjs::decimal(Fr::from(7u64))];
        assert_eq!(check(&key, &proof, &other), Ok(false));
        let a = proof["pi_a"].clone();
        proof["pi_a"] = proof["pi_c"].clone();
        proof["pi_c"] = a;
        assert_eq!(check(&key, &proof, &public), Ok(false));
    }

    #[test]
    fn refuses_malformed_inputs_with_a_reason() {
        let (key, proof, public) = toy();
        let mut off_curve = proof.clone();
        off_curve["pi_a"][1] = json!("5");
        assert!(check(&key, &off_curve, &public).unwrap_err().contains("not on the BN254 G1 curve"));
        let too_big = vec![Fr::MODULUS.to_string()];
        assert!(check(&key, &proof, &too_big).unwrap_err().contains("publicSignals[0] is not below"));
        assert!(check(&key, &proof, &[]).unwrap_err().contains("expected 1 public signals"));
        let mut not_decimal = proof.clone();
        not_decimal["pi_c"][0] = json!("0x12");
        assert!(check(&key, &not_decimal, &public).unwrap_err().contains("decimal string"));
    }

    #[test]
    fn refuses_a_g2_point_outside_the_subgroup() {
        // A point on the twist but not in the r-order subgroup: x = 1 + u solves y² = x³ + b' only
        // for some x; search a few small x for one on the curve, then check it is refused.
        let b = ark_bn254::g2::Config::COEFF_B;
        let outside = (1u64..200).find_map(|i| {
            let x = Fq2::new(Fq::from(i), Fq::one());
            let y = (x * x * x + b).sqrt()?;
            let p = G2Affine::new_unchecked(x, y);
            (!p.is_in_correct_subgroup_assuming_on_curve()).then_some(p)
        }).expect("a G2 point outside the subgroup");
        let (key, mut proof, public) = toy();
        proof["pi_b"] = snarkjs::g2(&outside);
        assert!(check(&key, &proof, &public).unwrap_err().contains("not in the BN254 G2 subgroup"));
    }

    #[test]
    fn the_committed_key_prepares() {
        assert_eq!(PreparedVerifier::from_json(&committed_key()).unwrap().n_public(), 4);
    }
}
