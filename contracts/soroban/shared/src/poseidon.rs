//! circomlib's Poseidon (BN254) through the host's `poseidon_permutation`, with circomlib's own
//! constants (params.rs): state `[0, inputs...]`, 8 full rounds and 57 (t = 3) or 56 (t = 4)
//! partial rounds, output `state[0]`. Equal to prover/poseidon.ts and to the circuit.
use soroban_sdk::{vec, Bytes, Env, Symbol, Vec, U256};

use crate::params::*;

/// The BN254 scalar field modulus r, big-endian.
pub const FIELD_MODULUS: [u8; 32] = [
    0x30, 0x64, 0x4e, 0x72, 0xe1, 0x31, 0xa0, 0x29, 0xb8, 0x50, 0x45, 0xb6, 0x81, 0x81, 0x58, 0x5d,
    0x28, 0x33, 0xe8, 0x48, 0x79, 0xb9, 0x70, 0x91, 0x43, 0xe1, 0xf5, 0x93, 0xf0, 0x00, 0x00, 0x01,
];

/// True when `value` is a canonical BN254 scalar field element (below r).
pub fn is_field(env: &Env, value: &U256) -> bool {
    *value < U256::from_be_bytes(env, &Bytes::from_array(env, &FIELD_MODULUS))
}

/// One Poseidon width's parameters as host objects, built once and reused for many hashes.
pub struct Poseidon {
    env: Env,
    t: u32,
    partial_rounds: u32,
    mds: Vec<Vec<U256>>,
    round_constants: Vec<Vec<U256>>,
}

fn u256(env: &Env, word: &[u8; 32]) -> U256 {
    U256::from_be_bytes(env, &Bytes::from_array(env, word))
}

fn matrix(env: &Env, words: &[[u8; 32]], width: usize) -> Vec<Vec<U256>> {
    let mut rows = Vec::new(env);
    for row in words.chunks(width) {
        let mut out = Vec::new(env);
        for w in row {
            out.push_back(u256(env, w));
        }
        rows.push_back(out);
    }
    rows
}

impl Poseidon {
    /// Poseidon over two inputs (t = 3): tree nodes.
    pub fn two(env: &Env) -> Self {
        Poseidon {
            env: env.clone(),
            t: 3,
            partial_rounds: POSEIDON_T3_PARTIAL_ROUNDS,
            mds: matrix(env, &POSEIDON_T3_MDS, 3),
            round_constants: matrix(env, &POSEIDON_T3_RC, 3),
        }
    }

    /// Poseidon over three inputs (t = 4): deposit leaves.
    pub fn three(env: &Env) -> Self {
        Poseidon {
            env: env.clone(),
            t: 4,
            partial_rounds: POSEIDON_T4_PARTIAL_ROUNDS,
            mds: matrix(env, &POSEIDON_T4_MDS, 4),
            round_constants: matrix(env, &POSEIDON_T4_RC, 4),
        }
    }

    fn permute(&self, state: Vec<U256>) -> U256 {
        let out = self.env.crypto_hazmat().poseidon_permutation(
            &state,
            Symbol::new(&self.env, "BN254"),
            self.t,
            5,
            POSEIDON_FULL_ROUNDS,
            self.partial_rounds,
            &self.mds,
            &self.round_constants,
        );
        out.get_unchecked(0)
    }

    /// Poseidon2(a, b); inputs must be field elements (the host would reduce them silently).
    pub fn hash2(&self, a: &U256, b: &U256) -> U256 {
        assert!(self.t == 3, "hash2 needs the t = 3 parameters");
        self.permute(vec![&self.env, U256::from_u32(&self.env, 0), a.clone(), b.clone()])
    }

    /// Poseidon3(a, b, c); inputs must be field elements.
    pub fn hash3(&self, a: &U256, b: &U256, c: &U256) -> U256 {
        assert!(self.t == 4, "hash3 needs the t = 4 parameters");
        self.permute(vec![&self.env, U256::from_u32(&self.env, 0), a.clone(), b.clone(), c.clone()])
    }
}

/// The root of an empty subtree of `height` (0..=20).
pub fn zero(env: &Env, height: u32) -> U256 {
    u256(env, &ZEROS[height as usize])
}
