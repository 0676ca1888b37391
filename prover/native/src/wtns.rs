//! Reader for circom's binary witness (`.wtns`, what `calculateWTNSBin` returns).
//!
//! Layout (little-endian): magic `wtns`, version, section count, sections `(id: u32, length: u64,
//! bytes)`: 1 = header (n8, prime q in n8 bytes, witness count), 2 = the witness values, n8 bytes
//! each, in plain (not Montgomery) form. Signal 0 is the constant 1, then the public signals.

use ark_bn254::Fr;
use ark_ff::{One, PrimeField};

use crate::zkey::bigint_le;

/// Parses a witness for BN254's scalar field, rejecting another field, a short file or a value
/// that is not a reduced field element.
pub fn read_witness(bytes: &[u8]) -> Result<Vec<Fr>, String> {
    let u32_at = |at: usize| -> Result<u32, String> {
        bytes.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).ok_or_else(|| "witness truncated".to_string())
    };
    let u64_at = |at: usize| -> Result<u64, String> {
        bytes.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).ok_or_else(|| "witness truncated".to_string())
    };
    if bytes.get(0..4) != Some(b"wtns") {
        return Err("not a circom witness (magic is not 'wtns')".into());
    }
    let count = u32_at(8)?;
    let mut at = 12;
    let (mut header, mut values) = (None, None);
    for _ in 0..count {
        let id = u32_at(at)?;
        let len = usize::try_from(u64_at(at + 4)?).map_err(|_| "witness section too large".to_string())?;
        let start = at + 12;
        let end = start.checked_add(len).filter(|&e| e <= bytes.len()).ok_or("witness truncated")?;
        match id {
            1 => header = Some(&bytes[start..end]),
            2 => values = Some(&bytes[start..end]),
            _ => {}
        }
        at = end;
    }
    let header = header.ok_or("witness has no header section")?;
    let values = values.ok_or("witness has no values section")?;
    if header.len() != 4 + 32 + 4 || u32::from_le_bytes(header[0..4].try_into().unwrap()) != 32 || bigint_le(&header[4..36]) != Fr::MODULUS {
        return Err("witness is not over BN254's scalar field".into());
    }
    let n = u32::from_le_bytes(header[36..40].try_into().unwrap()) as usize;
    if values.len() != n * 32 {
        return Err(format!("witness values section is {} bytes, expected {}", values.len(), n * 32));
    }
    let witness = values
        .chunks_exact(32)
        .map(|chunk| Fr::from_bigint(bigint_le(chunk)).ok_or_else(|| "witness holds a value that is not reduced".to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    if witness.first() != Some(&Fr::one()) {
        return Err("witness signal 0 is not 1".into());
    }
    Ok(witness)
}
