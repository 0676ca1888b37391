//! A verification key made by a proving-key ceremony (circuits/ceremony), checked in the Soroban
//! host before any contract is rebuilt with it: `circuits/ceremony/ceremony.test.ts` writes the key
//! data `finalize` generated (params.rs's points, as bytes) and proofs made with the ceremony's zkey
//! to a JSON file and runs this test with `CEREMONY_HOST_CASES` naming it. Ignored in a plain
//! `cargo test` (there is no file then).
use relayer_soroban_shared::groth16::{verify_with, VerificationKey};
use serde_json::Value;
use soroban_sdk::Env;

use crate::support::{bytes, hex_bytes, u256};

#[test]
#[ignore = "run by circuits/ceremony/ceremony.test.ts with CEREMONY_HOST_CASES"]
fn ceremony_key_verifies_its_proofs_in_the_host() {
    let path = std::env::var("CEREMONY_HOST_CASES").expect("CEREMONY_HOST_CASES names the cases file");
    let cases: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("cases file")).expect("cases parse");
    let key = hex_bytes(cases["key"].as_str().expect("key"));
    assert_eq!(key.len(), 64 + 3 * 128 + 5 * 64, "key bytes: alpha ‖ beta ‖ gamma ‖ delta ‖ IC[5]");
    let alpha: [u8; 64] = key[0..64].try_into().unwrap();
    let beta: [u8; 128] = key[64..192].try_into().unwrap();
    let gamma: [u8; 128] = key[192..320].try_into().unwrap();
    let delta: [u8; 128] = key[320..448].try_into().unwrap();
    let mut ic = [[0u8; 64]; 5];
    for (i, point) in ic.iter_mut().enumerate() {
        point.copy_from_slice(&key[448 + 64 * i..512 + 64 * i]);
    }
    let vk = VerificationKey { alpha: &alpha, beta: &beta, gamma: &gamma, delta: &delta, ic: &ic };

    let list = cases["cases"].as_array().expect("cases");
    assert!(!list.is_empty());
    for (i, case) in list.iter().enumerate() {
        let env = Env::default();
        let signals: Vec<_> = case["signals"].as_array().expect("signals").iter().map(|s| u256(&env, s.as_str().unwrap())).collect();
        let proof = bytes(&env, case["proof"].as_str().expect("proof"));
        let verified = verify_with(&env, &vk, &proof, [&signals[0], &signals[1], &signals[2], &signals[3]]).expect("signals in the field");
        assert_eq!(verified, case["valid"].as_bool().expect("valid"), "case {i}: {}", case["what"]);
    }
}
