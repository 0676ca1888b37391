//! What the reference Soroban AdManager and OrderPortal share (contracts/soroban/README.md): the
//! relayer's ed25519-signed requests in the byte layout of chains/stellar/request-layout.ts, the
//! chain-independent order hash, circomlib's Poseidon through the host's permutation, the depth-20
//! deposit tree, Groth16 verification with the BN254 host functions, the hash time-lock's time
//! rules, and token moves.
#![no_std]

pub mod errors;
pub mod events;
pub mod groth16;
pub mod order;
pub mod params;
pub mod poseidon;
pub mod requests;
pub mod settle;
pub mod times;
pub mod tokens;
pub mod tree;
pub mod words;

pub use errors::Error;
pub use order::Order;
