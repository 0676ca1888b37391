//! Groth16 proving exactly as snarkjs (and rapidsnark) do it for a zkey, so the proofs verify
//! against the verification key and `Verifier.sol` exported from that zkey.
//!
//! The one place where snarkjs differs from textbook Groth16 is the quotient polynomial: its H
//! query holds, for the odd points of the domain twice as large (the coset w₂ₙ·⟨wₙ⟩), the bases
//! that turn the evaluations of A·B − C on that coset straight into h(τ)·Z(τ)/δ. So the prover
//! never divides by Z: it interpolates A, B and C over the domain, evaluates them on the odd coset
//! and feeds A·B − C to the H multi-exponentiation.

use ark_bn254::{g1, g2, Fr};
use ark_ec::short_weierstrass::{Projective, SWCurveConfig};
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::{BigInt, PrimeField, UniformRand, Zero};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use rand::{CryptoRng, RngCore};

use crate::msm::FixedBaseMsm;
use crate::zkey::{ProvingKey, SparseQuery};

/// A proof in affine coordinates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    pub a: ark_bn254::G1Affine,
    pub b: ark_bn254::G2Affine,
    pub c: ark_bn254::G1Affine,
}

/// A proving key with its evaluation domains, ready to prove many times.
pub struct Prover {
    pub key: ProvingKey,
    domain: Radix2EvaluationDomain<Fr>,
    odd_coset: Radix2EvaluationDomain<Fr>,
    a: Query<g1::Config>,
    b_g1: Query<g1::Config>,
    b_g2: Query<g2::Config>,
    c: Query<g1::Config>,
    h: FixedBaseMsm<g1::Config>,
}

/// A query's signals and its precomputed multi-exponentiation.
struct Query<P: SWCurveConfig> {
    signals: Vec<u32>,
    msm: FixedBaseMsm<P>,
}

impl<P: SWCurveConfig> Query<P> {
    fn new(query: &SparseQuery<ark_ec::short_weierstrass::Affine<P>>) -> Self {
        Query { signals: query.signals.clone(), msm: FixedBaseMsm::new(&query.points) }
    }

    /// Σ witness[signal]·base over the query's (non-infinity) bases.
    fn eval(&self, witness: &[BigInt<4>]) -> Projective<P> {
        let scalars: Vec<BigInt<4>> = self.signals.iter().map(|&s| witness[s as usize]).collect();
        self.msm.msm(&scalars)
    }
}

impl Prover {
    /// Prepares the evaluation domains for `key` and the tables of its fixed-base
    /// multi-exponentiations (tens of MB, about a second of CPU once per process).
    pub fn new(key: ProvingKey) -> Result<Self, String> {
        let n = key.domain_size;
        let domain = Radix2EvaluationDomain::<Fr>::new(n).filter(|d| d.size() == n).ok_or("domain size not supported")?;
        // A primitive 2n-th root of unity; arkworks and snarkjs derive their roots from the same
        // generator (5), so this is snarkjs's Fr.w[power + 1].
        let root_2n = Radix2EvaluationDomain::<Fr>::new(2 * n).ok_or("domain size not supported")?.group_gen();
        let odd_coset = domain.get_coset(root_2n).ok_or("cannot build the odd coset")?;
        let (a, b_g1, b_g2, c, h) = (Query::new(&key.a), Query::new(&key.b_g1), Query::new(&key.b_g2), Query::new(&key.c), FixedBaseMsm::new(&key.h));
        Ok(Prover { key, domain, odd_coset, a, b_g1, b_g2, c, h })
    }

    /// Proves for a full circom witness (signal 0 = 1, then the public signals, then the rest),
    /// drawing the blinding factors r, s from `rng`. The witness is not checked against the
    /// constraints: circom's calculator already refuses inputs that violate them.
    pub fn prove<R: RngCore + CryptoRng>(&self, witness: &[Fr], rng: &mut R) -> Result<Proof, String> {
        let key = &self.key;
        if witness.len() != key.n_vars {
            return Err(format!("witness has {} signals, the zkey expects {}", witness.len(), key.n_vars));
        }
        let n = key.domain_size;
        let mut a = vec![Fr::zero(); n];
        let mut b = vec![Fr::zero(); n];
        for co in &key.coefficients {
            let term = co.value * witness[co.signal as usize];
            if co.matrix_b {
                b[co.constraint as usize] += term;
            } else {
                a[co.constraint as usize] += term;
            }
        }
        let mut c: Vec<Fr> = a.iter().zip(&b).map(|(x, y)| *x * y).collect();
        let to_odd_coset = |values: &mut Vec<Fr>| {
            self.domain.ifft_in_place(values);
            self.odd_coset.fft_in_place(values);
        };
        rayon::join(|| to_odd_coset(&mut a), || rayon::join(|| to_odd_coset(&mut b), || to_odd_coset(&mut c)));
        let h: Vec<BigInt<4>> = a.iter().zip(&b).zip(&c).map(|((x, y), z)| (*x * y - z).into_bigint()).collect();
        drop((a, b, c));

        let w: Vec<BigInt<4>> = witness.iter().map(|x| x.into_bigint()).collect();
        let ((a_acc, b1_acc), (b2_acc, (c_acc, h_acc))) = rayon::join(
            || rayon::join(|| self.a.eval(&w), || self.b_g1.eval(&w)),
            || rayon::join(|| self.b_g2.eval(&w), || rayon::join(|| self.c.eval(&w), || self.h.msm(&h))),
        );

        let r = Fr::rand(rng);
        let s = Fr::rand(rng);
        let delta_g1 = key.delta_g1.into_group();
        let pi_a = a_acc + key.alpha_g1 + delta_g1 * r;
        let b1 = b1_acc + key.beta_g1 + delta_g1 * s;
        let pi_b = b2_acc + key.beta_g2 + key.delta_g2.into_group() * s;
        let pi_c = c_acc + h_acc + pi_a * s + b1 * r - delta_g1 * (r * s);
        Ok(Proof { a: pi_a.into_affine(), b: pi_b.into_affine(), c: pi_c.into_affine() })
    }
}
