//! Reader for snarkjs's Groth16 proving key (`.zkey`, the "zkey" binary container).
//!
//! Layout (all integers little-endian): magic `zkey`, version, section count, then sections
//! `(id: u32, length: u64, bytes)`. The ones a prover needs:
//!  1 protocol (1 = Groth16)
//!  2 Groth16 header: n8q, q, n8r, r, nVars, nPublic, domainSize, alpha1, beta1, beta2, gamma2, delta1, delta2
//!  3 IC (nPublic + 1 G1 points)
//!  4 coefficients: count, then (matrix 0=A/1=B, constraint, signal, value) records
//!  5 A (nVars G1), 6 B1 (nVars G1), 7 B2 (nVars G2), 8 C (nVars - nPublic - 1 G1), 9 H (domainSize G1)
//!
//! Field elements of points are stored in Montgomery form (x·R mod q, R = 2^256), so they map
//! straight onto arkworks' internal representation. Coefficients are stored as c·R² mod r
//! (snarkjs multiplies them with a plain-form witness using a Montgomery multiplication), so the
//! reader divides by R² once.

use ark_bn254::{Fq, Fq2, Fr, G1Affine, G2Affine};
use ark_ec::AffineRepr;
use ark_ff::{BigInt, Field, PrimeField, Zero};

/// One non-zero entry of the A or B matrix (constraint row, signal column).
#[derive(Clone, Copy, Debug)]
pub struct Coefficient {
    pub matrix_b: bool,
    pub constraint: u32,
    pub signal: u32,
    pub value: Fr,
}

/// A fixed-base query with the points at infinity left out: `points[k]` belongs to signal
/// `signals[k]`. Circom's B query is a third infinity (signals that never appear in B), and an MSM
/// pays for every base it is given.
#[derive(Clone, Debug, Default)]
pub struct SparseQuery<P> {
    pub signals: Vec<u32>,
    pub points: Vec<P>,
}

/// Everything the prover reads from a zkey.
#[derive(Clone, Debug)]
pub struct ProvingKey {
    pub n_vars: usize,
    pub n_public: usize,
    pub domain_size: usize,
    pub alpha_g1: G1Affine,
    pub beta_g1: G1Affine,
    pub beta_g2: G2Affine,
    pub gamma_g2: G2Affine,
    pub delta_g1: G1Affine,
    pub delta_g2: G2Affine,
    pub ic: Vec<G1Affine>,
    pub coefficients: Vec<Coefficient>,
    pub a: SparseQuery<G1Affine>,
    pub b_g1: SparseQuery<G1Affine>,
    pub b_g2: SparseQuery<G2Affine>,
    /// Indexed from signal nPublic + 1.
    pub c: SparseQuery<G1Affine>,
    pub h: Vec<G1Affine>,
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&end| end <= self.bytes.len());
        let end = end.ok_or_else(|| format!("zkey truncated at byte {} (wanted {n} more)", self.at))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn bigint(&mut self) -> Result<BigInt<4>, String> {
        Ok(bigint_le(self.take(32)?))
    }
}

/// 32 little-endian bytes as a 256-bit integer.
pub fn bigint_le(bytes: &[u8]) -> BigInt<4> {
    let mut limbs = [0u64; 4];
    for (i, limb) in limbs.iter_mut().enumerate() {
        *limb = u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap());
    }
    BigInt::new(limbs)
}

fn fq_montgomery(c: &mut Cursor) -> Result<Fq, String> {
    let raw = c.bigint()?;
    if raw >= Fq::MODULUS {
        return Err("zkey holds a base-field element that is not reduced".into());
    }
    // The bytes are the Montgomery representation itself: no conversion.
    Ok(Fq::new_unchecked(raw))
}

fn g1(c: &mut Cursor) -> Result<G1Affine, String> {
    let (x, y) = (fq_montgomery(c)?, fq_montgomery(c)?);
    if x.is_zero() && y.is_zero() {
        return Ok(G1Affine::identity());
    }
    let p = G1Affine::new_unchecked(x, y);
    // BN254's G1 has cofactor 1: on the curve means in the group.
    if !p.is_on_curve() {
        return Err("zkey holds a G1 point that is not on the curve".into());
    }
    Ok(p)
}

fn g2(c: &mut Cursor) -> Result<G2Affine, String> {
    let x = Fq2::new(fq_montgomery(c)?, fq_montgomery(c)?);
    let y = Fq2::new(fq_montgomery(c)?, fq_montgomery(c)?);
    if x.is_zero() && y.is_zero() {
        return Ok(G2Affine::identity());
    }
    let p = G2Affine::new_unchecked(x, y);
    // On-curve only: the subgroup check costs a scalar multiplication per point, and the points
    // come from our own committed ceremony output, not from a caller.
    if !p.is_on_curve() {
        return Err("zkey holds a G2 point that is not on the curve".into());
    }
    Ok(p)
}

fn sparse<P: AffineRepr>(points: Vec<P>, first_signal: u32) -> SparseQuery<P> {
    let mut query = SparseQuery { signals: Vec::new(), points: Vec::new() };
    for (i, p) in points.into_iter().enumerate() {
        if !p.is_zero() {
            query.signals.push(first_signal + i as u32);
            query.points.push(p);
        }
    }
    query
}

impl ProvingKey {
    /// Parses a snarkjs Groth16 zkey for BN254, checking the header (protocol, both moduli), the
    /// section sizes, that every point is on its curve and every coefficient is in range.
    pub fn from_zkey(bytes: &[u8]) -> Result<Self, String> {
        let mut c = Cursor { bytes, at: 0 };
        if c.take(4)? != b"zkey" {
            return Err("not a zkey file (magic is not 'zkey')".into());
        }
        let _version = c.u32()?;
        let count = c.u32()?;
        let mut sections: [Option<(usize, usize)>; 11] = [None; 11];
        for _ in 0..count {
            let id = c.u32()? as usize;
            let len = usize::try_from(c.u64()?).map_err(|_| "zkey section too large".to_string())?;
            let start = c.at;
            c.take(len)?;
            if id < sections.len() && sections[id].is_none() {
                sections[id] = Some((start, len));
            }
        }
        let section = |id: usize| -> Result<Cursor, String> {
            let (start, len) = sections[id].ok_or_else(|| format!("zkey has no section {id}"))?;
            Ok(Cursor { bytes: &bytes[..start + len], at: start })
        };
        let expect_len = |id: usize, want: usize| -> Result<(), String> {
            let got = sections[id].map(|(_, len)| len).unwrap_or(0);
            if got != want {
                return Err(format!("zkey section {id} is {got} bytes, expected {want}"));
            }
            Ok(())
        };

        if section(1)?.u32()? != 1 {
            return Err("zkey is not a Groth16 key".into());
        }
        let mut h = section(2)?;
        if h.u32()? != 32 || h.bigint()? != Fq::MODULUS || h.u32()? != 32 || h.bigint()? != Fr::MODULUS {
            return Err("zkey is not over BN254 (bn128)".into());
        }
        let n_vars = h.u32()? as usize;
        let n_public = h.u32()? as usize;
        let domain_size = h.u32()? as usize;
        if !domain_size.is_power_of_two() || n_vars <= n_public {
            return Err(format!("zkey header is inconsistent: nVars {n_vars}, nPublic {n_public}, domainSize {domain_size}"));
        }
        let alpha_g1 = g1(&mut h)?;
        let beta_g1 = g1(&mut h)?;
        let beta_g2 = g2(&mut h)?;
        let gamma_g2 = g2(&mut h)?;
        let delta_g1 = g1(&mut h)?;
        let delta_g2 = g2(&mut h)?;

        expect_len(3, (n_public + 1) * 64)?;
        let mut s = section(3)?;
        let ic = (0..=n_public).map(|_| g1(&mut s)).collect::<Result<Vec<_>, _>>()?;

        let mut s = section(4)?;
        let n_coefficients = s.u32()? as usize;
        expect_len(4, 4 + n_coefficients * 44)?;
        // Stored as c·R² (mod r); from_bigint gives the element c·R², one multiplication by R⁻² gives c.
        let r = Fr::from(2u64).pow([256u64]);
        let r2_inverse = (r * r).inverse().expect("R is invertible");
        let mut coefficients = Vec::with_capacity(n_coefficients);
        for _ in 0..n_coefficients {
            let matrix = s.u32()?;
            let constraint = s.u32()?;
            let signal = s.u32()?;
            let stored = Fr::from_bigint(s.bigint()?).ok_or("zkey holds a coefficient that is not reduced")?;
            if matrix > 1 || constraint as usize >= domain_size || signal as usize >= n_vars {
                return Err(format!("zkey coefficient out of range: matrix {matrix}, constraint {constraint}, signal {signal}"));
            }
            coefficients.push(Coefficient { matrix_b: matrix == 1, constraint, signal, value: stored * r2_inverse });
        }

        let g1s = |id: usize, n: usize| -> Result<Vec<G1Affine>, String> {
            expect_len(id, n * 64)?;
            let mut s = section(id)?;
            (0..n).map(|_| g1(&mut s)).collect()
        };
        let a = sparse(g1s(5, n_vars)?, 0);
        let b_g1 = sparse(g1s(6, n_vars)?, 0);
        expect_len(7, n_vars * 128)?;
        let mut s = section(7)?;
        let b_g2 = sparse((0..n_vars).map(|_| g2(&mut s)).collect::<Result<Vec<_>, _>>()?, 0);
        let c_query = sparse(g1s(8, n_vars - n_public - 1)?, n_public as u32 + 1);
        let h_query = g1s(9, domain_size)?;

        Ok(ProvingKey {
            n_vars, n_public, domain_size, alpha_g1, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2, ic, coefficients,
            a, b_g1, b_g2, c: c_query, h: h_query,
        })
    }
}
