//! OrderPortal in the Soroban host: deposits mirror MerkleTreeStore's tree, root for root, and the
//! prover's proof releases a deposit once.
use crate::support::*;
use relayer_soroban_order_portal::OrderState;
use relayer_soroban_shared::Error;
use serde_json::Value;
use soroban_sdk::{Bytes, BytesN};

pub(crate) fn deposit(w: &World, d: &Value) -> Result<(), Option<Error>> {
    let env = &w.env;
    let call = &d["createOrder"];
    let s = signed(env, call);
    match w.order_portal.try_create_order(
        &w.bridger,
        &order(env, &d["order"]),
        &u256(env, text(call, "secretCommitment")),
        &s.auth_token,
        &s.deadline,
        &s.signer,
        &s.signature,
    ) {
        Ok(_) => Ok(()),
        Err(Ok(e)) => Err(Some(e)),
        Err(Err(_)) => Err(None),
    }
}

pub(crate) fn deposits(w: &World) -> Vec<Value> {
    w.v["orderPortal"]["deposits"].as_array().unwrap().clone()
}

/// Makes every deposit of the vectors, in order.
pub(crate) fn with_deposits() -> World {
    let w = world();
    for d in deposits(&w) {
        deposit(&w, &d).unwrap();
    }
    w
}

pub(crate) fn unlock(w: &World, call_key: &str, order_index: usize, proof: &Bytes) -> Result<(), Option<Error>> {
    let env = &w.env;
    let call = &w.v["orderPortal"][call_key];
    let s = signed(env, call);
    match w.order_portal.try_unlock(
        &order(env, &deposits(w)[order_index]["order"]),
        &u256(env, text(call, "nullifierHash")),
        &u256(env, text(call, "targetRoot")),
        proof,
        &s.auth_token,
        &s.deadline,
        &s.signer,
        &s.signature,
    ) {
        Ok(_) => Ok(()),
        Err(Ok(e)) => Err(Some(e)),
        Err(Err(_)) => Err(None),
    }
}

pub(crate) fn ours(w: &World) -> usize {
    w.v["orderPortal"]["ours"].as_u64().unwrap() as usize
}

pub(crate) fn proof(w: &World) -> Bytes {
    bytes(&w.env, text(&w.v["orderPortal"]["proof"], "proof"))
}

#[test]
fn each_deposit_leaves_the_root_merkle_tree_store_computed() {
    let w = world();
    let env = &w.env;
    let portal = w.order_portal.address.clone();
    let bridger_before = w.balance(&w.bridger);
    let mut total = 0;
    for (i, d) in deposits(&w).iter().enumerate() {
        deposit(&w, d).unwrap();
        let e = expect_event(&w, &portal, "OrderCreated", &signed(env, &d["createOrder"]).req_hash, &bytes32(env, text(&d["order"], "hash")));
        assert_eq!(data_field(&e, "leafIndex"), soroban_sdk::xdr::ScVal::U32(i as u32));
        assert_eq!(scval_u256(&data_field(&e, "leaf")), word(text(d, "leaf")), "leaf = Poseidon3(hi, lo, commitment) as prover/commitments.ts");
        assert_eq!(scval_u256(&data_field(&e, "root")), word(text(d, "root")), "root after deposit {i} equals MerkleTreeStore's");
        assert_eq!(w.order_portal.current_root(), u256(env, text(d, "root")));
        total += amount(&d["order"]["words"], "orderAmount");
    }
    assert_eq!(w.order_portal.next_leaf_index(), 4);
    assert_eq!(bridger_before - w.balance(&w.bridger), total);
    assert_eq!(w.balance(&portal), total);
    for d in deposits(&w) {
        assert!(w.order_portal.is_known_root(&u256(env, text(&d, "root"))), "every recent root stays known");
    }
}

#[test]
fn pays_the_makers_recipient_once_with_the_provers_proof() {
    let w = with_deposits();
    let env = &w.env;
    let d = &deposits(&w)[ours(&w)];
    let order_hash: BytesN<32> = bytes32(env, text(&d["order"], "hash"));
    let maker_before = w.balance(&w.maker);
    unlock(&w, "unlock", ours(&w), &proof(&w)).unwrap();
    let e = expect_event(&w, &w.order_portal.address, "OrderUnlocked", &signed(env, &w.v["orderPortal"]["unlock"]).req_hash, &order_hash);
    assert_eq!(scval_u256(&data_field(&e, "nullifierHash")), word(text(d, "nullifierHash")));
    assert_eq!(w.balance(&w.maker) - maker_before, amount(&d["order"]["words"], "orderAmount"), "the Maker is paid the order amount, not the ad amount");
    assert_eq!(w.order_portal.order_state(&order_hash), OrderState::Unlocked);
    assert_eq!(unlock(&w, "unlock", ours(&w), &proof(&w)), Err(Some(Error::AuthTokenUsed)), "the same request twice");
}

#[test]
fn refuses_a_root_the_portal_never_had() {
    let w = with_deposits();
    assert_eq!(unlock(&w, "unlockUnknownRoot", ours(&w), &proof(&w)), Err(Some(Error::UnknownRoot)));
}

#[test]
fn refuses_a_spent_nullifier() {
    let w = with_deposits();
    unlock(&w, "unlock", ours(&w), &proof(&w)).unwrap();
    assert_eq!(unlock(&w, "unlockSpentNullifier", 0, &proof(&w)), Err(Some(Error::NullifierSpent)));
}

#[test]
fn refuses_a_tampered_proof() {
    let w = with_deposits();
    let other = bytes(&w.env, text(&w.v["adManager"]["proof"], "proof"));
    assert_eq!(unlock(&w, "unlock", ours(&w), &other), Err(Some(Error::InvalidProof)));
    let mut flipped = proof(&w);
    flipped.set(10, flipped.get(10).unwrap() ^ 1);
    assert!(unlock(&w, "unlock", ours(&w), &flipped).is_err());
    // Swapping A and C keeps both points on the curve.
    let real = proof(&w);
    let mut swapped = real.clone();
    swapped.copy_from_slice(0, &{ let mut c = [0u8; 64]; real.slice(192..256).copy_into_slice(&mut c); c });
    swapped.copy_from_slice(192, &{ let mut a = [0u8; 64]; real.slice(0..64).copy_into_slice(&mut a); a });
    assert_eq!(unlock(&w, "unlock", ours(&w), &swapped), Err(Some(Error::InvalidProof)));
    assert_eq!(unlock(&w, "unlock", ours(&w), &real), Ok(()));
}

#[test]
fn refuses_an_expired_or_replayed_deposit_request() {
    let w = world();
    let d = &deposits(&w)[0];
    let deadline = signed(&w.env, &d["createOrder"]).deadline;
    w.set_time(deadline + 1);
    assert_eq!(deposit(&w, d), Err(Some(Error::RequestExpired)));
    w.set_time(deadline);
    deposit(&w, d).unwrap();
    assert_eq!(deposit(&w, d), Err(Some(Error::AuthTokenUsed)));
}

#[test]
fn refuses_a_deposit_by_anyone_but_the_orders_bridger() {
    let w = world();
    let env = &w.env;
    let d = &deposits(&w)[0];
    let s = signed(env, &d["createOrder"]);
    let result = w.order_portal.try_create_order(
        &w.maker,
        &order(env, &d["order"]),
        &u256(env, text(&d["createOrder"], "secretCommitment")),
        &s.auth_token,
        &s.deadline,
        &s.signer,
        &s.signature,
    );
    assert_eq!(result, Err(Ok(Error::OrderMismatch)));
    assert_eq!(w.order_portal.next_leaf_index(), 0);
}
