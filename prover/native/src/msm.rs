//! Fixed-base multi-scalar multiplication for the proving key's queries.
//!
//! The bases never change between proofs, so each base P is stored with its shifts 2^(c·j)·P
//! for every window j. A scalar's signed base-2^c digits then all fall into ONE set of 2^(c-1)
//! buckets (digit d of window j adds ±2^(c·j)·P to bucket |d|), and the per-window bucket sums and
//! the doublings between windows of plain Pippenger disappear. Buckets are accumulated in affine
//! coordinates, a batch of additions sharing one field inversion (Montgomery's trick): about 6
//! multiplications per addition instead of 11 for a mixed Jacobian one.

use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::{AdditiveGroup, AffineRepr, CurveGroup};
use ark_ff::{batch_inversion, BigInt, BigInteger, Field, Zero};
use rayon::prelude::*;

/// Bits of the largest scalar (BN254's r < 2^254).
const SCALAR_BITS: usize = 254;
/// Additions that share one inversion.
const BATCH: usize = 256;

/// Precomputed shifts of a fixed list of bases, ready for many multi-exponentiations.
pub struct FixedBaseMsm<P: SWCurveConfig> {
    c: usize,
    windows: usize,
    /// `table[i * windows + j] = 2^(c·j) · bases[i]`.
    table: Vec<Affine<P>>,
    len: usize,
}

/// The window (bits per digit) that minimises roughly 6·N·windows (batch-affine additions) plus
/// 27·2^(c-1) (the Jacobian additions of the final bucket sum), in base-field multiplications.
fn window_bits(n: usize) -> usize {
    (4..=16).min_by_key(|&c| 6 * n * (SCALAR_BITS / c + 1) + 27 * (1 << (c - 1))).unwrap()
}

/// Signed base-2^c digits of `s` (each in (-2^(c-1), 2^(c-1)]), least significant first.
fn signed_digits(s: &BigInt<4>, c: usize, out: &mut [i32]) {
    let mask = (1u64 << c) - 1;
    let half = 1i64 << (c - 1);
    let mut carry = 0i64;
    for (j, digit) in out.iter_mut().enumerate() {
        let bit = j * c;
        let (limb, offset) = (bit / 64, bit % 64);
        let mut raw = s.0[limb] >> offset;
        if offset + c > 64 && limb + 1 < 4 {
            raw |= s.0[limb + 1] << (64 - offset);
        }
        let value = (raw & mask) as i64 + carry;
        if value > half {
            *digit = (value - (1i64 << c)) as i32;
            carry = 1;
        } else {
            *digit = value as i32;
            carry = 0;
        }
    }
    debug_assert_eq!(carry, 0, "scalar wider than {SCALAR_BITS} bits");
}

/// 2^(c-1) affine buckets filled through batched affine additions.
struct Buckets<P: SWCurveConfig> {
    points: Vec<Affine<P>>,
    busy: Vec<bool>,
    batch: Vec<(u32, Affine<P>)>,
    deferred: Vec<(u32, Affine<P>)>,
    denominators: Vec<P::BaseField>,
}

impl<P: SWCurveConfig> Buckets<P> {
    fn new(count: usize) -> Self {
        Buckets {
            points: vec![Affine::identity(); count],
            busy: vec![false; count],
            batch: Vec::with_capacity(BATCH),
            deferred: Vec::new(),
            denominators: Vec::with_capacity(BATCH),
        }
    }

    fn add(&mut self, bucket: u32, point: Affine<P>) {
        let b = bucket as usize;
        if self.busy[b] {
            // Already being added to in this batch: its new value is not known yet.
            self.deferred.push((bucket, point));
        } else if self.points[b].infinity {
            self.points[b] = point;
        } else {
            self.busy[b] = true;
            self.batch.push((bucket, point));
            if self.batch.len() == BATCH {
                self.flush();
            }
        }
    }

    fn flush(&mut self) {
        self.denominators.clear();
        for &(bucket, p) in &self.batch {
            let q = self.points[bucket as usize];
            self.denominators.push(if q.x != p.x {
                p.x - q.x
            } else if q.y == p.y && !p.y.is_zero() {
                q.y.double() // the same point: a doubling
            } else {
                P::BaseField::ONE // p = -q: the sum is the point at infinity, nothing to invert
            });
        }
        batch_inversion(&mut self.denominators);
        for (&(bucket, p), inverse) in self.batch.iter().zip(&self.denominators) {
            let b = bucket as usize;
            let q = self.points[b];
            self.busy[b] = false;
            let lambda = if q.x != p.x {
                (p.y - q.y) * inverse
            } else if q.y == p.y && !p.y.is_zero() {
                let x2 = q.x.square();
                (x2.double() + x2 + P::COEFF_A) * inverse
            } else {
                self.points[b] = Affine::identity();
                continue;
            };
            let x3 = lambda.square() - q.x - p.x;
            let y3 = lambda * (q.x - x3) - q.y;
            self.points[b] = Affine::new_unchecked(x3, y3);
        }
        self.batch.clear();
    }

    /// Finishes every pending addition and returns Σ (k+1)·bucket[k].
    fn sum(mut self) -> Projective<P> {
        self.flush();
        while !self.deferred.is_empty() {
            for (bucket, point) in std::mem::take(&mut self.deferred) {
                self.add(bucket, point);
            }
            self.flush();
        }
        let mut running = Projective::<P>::zero();
        let mut total = Projective::<P>::zero();
        for q in self.points.iter().rev() {
            if !q.infinity {
                running += q;
            }
            total += running;
        }
        total
    }
}

impl<P: SWCurveConfig> FixedBaseMsm<P> {
    /// Precomputes the shifts of `bases` (none of them the point at infinity).
    pub fn new(bases: &[Affine<P>]) -> Self {
        let c = window_bits(bases.len());
        let windows = SCALAR_BITS / c + 1;
        let shifted: Vec<Projective<P>> = bases
            .par_iter()
            .flat_map_iter(|base| {
                let mut p = base.into_group();
                (0..windows).map(move |_| {
                    let current = p;
                    for _ in 0..c {
                        p.double_in_place();
                    }
                    current
                })
            })
            .collect();
        FixedBaseMsm { c, windows, table: Projective::normalize_batch(&shifted), len: bases.len() }
    }

    /// Σ scalars[i]·bases[i]; `scalars` must be reduced field elements, one per base.
    pub fn msm(&self, scalars: &[BigInt<4>]) -> Projective<P> {
        assert_eq!(scalars.len(), self.len, "one scalar per base");
        let chunk = self.len.div_ceil(rayon::current_num_threads()).max(1);
        scalars
            .par_chunks(chunk)
            .enumerate()
            .map(|(k, chunk_scalars)| {
                let mut buckets = Buckets::<P>::new(1 << (self.c - 1));
                let mut digits = vec![0i32; self.windows];
                for (offset, scalar) in chunk_scalars.iter().enumerate() {
                    if scalar.is_zero() {
                        continue;
                    }
                    let row = &self.table[(k * chunk + offset) * self.windows..][..self.windows];
                    signed_digits(scalar, self.c, &mut digits);
                    for (&d, point) in digits.iter().zip(row) {
                        if d > 0 {
                            buckets.add((d - 1) as u32, *point);
                        } else if d < 0 {
                            buckets.add((-d - 1) as u32, -*point);
                        }
                    }
                }
                buckets.sum()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bn254::Fr;
    use ark_ec::VariableBaseMSM;
    use ark_ff::{PrimeField, UniformRand};
    use rand::{rngs::StdRng, SeedableRng};

    fn check<P: SWCurveConfig<ScalarField = Fr>>(n: usize, seed: u64)
    where
        Projective<P>: VariableBaseMSM<MulBase = Affine<P>, ScalarField = Fr>,
    {
        let mut rng = StdRng::seed_from_u64(seed);
        let bases: Vec<Affine<P>> = (0..n).map(|_| Projective::<P>::rand(&mut rng).into_affine()).collect();
        let mut scalars: Vec<Fr> = (0..n).map(|_| Fr::rand(&mut rng)).collect();
        // The scalars circom witnesses are full of, and the extremes of the digit recoding.
        let specials = [Fr::from(0u64), Fr::from(1u64), -Fr::from(1u64), Fr::from(2u64).pow([253u64]), Fr::from(1u64 << 11)];
        for (i, s) in specials.iter().enumerate().take(n) {
            scalars[i] = *s;
        }
        // Repeated bases with equal scalars land in the same buckets: P + P takes the doubling
        // path of the affine addition, P + (-P) the one that empties the bucket.
        let mut bases = bases;
        if n > 10 {
            bases[7] = bases[6];
            scalars[7] = scalars[6];
            bases[10] = -bases[9];
            scalars[10] = scalars[9];
        }
        let bigints: Vec<_> = scalars.iter().map(|s| s.into_bigint()).collect();
        let expected = Projective::<P>::msm(&bases, &scalars).unwrap();
        assert_eq!(FixedBaseMsm::new(&bases).msm(&bigints), expected, "n = {n}, seed = {seed}");
    }

    #[test]
    fn equals_arkworks_msm_on_g1_and_g2() {
        for (n, seed) in [(1, 1), (11, 2), (300, 3), (2000, 4)] {
            check::<ark_bn254::g1::Config>(n, seed);
        }
        for (n, seed) in [(11, 5), (500, 6)] {
            check::<ark_bn254::g2::Config>(n, seed);
        }
    }
}
