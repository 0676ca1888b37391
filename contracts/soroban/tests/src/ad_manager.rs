//! AdManager in the Soroban host with the TypeScript side's signed requests and proof.
use crate::support::*;
use relayer_soroban_ad_manager::OrderState;
use relayer_soroban_shared::Error;
use soroban_sdk::Bytes;

/// Creates the ad with the vectors' signed createAd; returns the world.
pub(crate) fn with_ad() -> World {
    let w = world();
    let env = &w.env;
    let v = &w.v["adManager"];
    let call = &v["createAd"];
    let s = signed(env, call);
    w.ad_manager.create_ad(
        &w.maker,
        &uuid_word(env, text(call, "adId")),
        &w.token,
        &amount(call, "initialAmount"),
        &u256(env, text(call, "orderChainId")),
        &bytes32(env, &format!("0x{:0>64}", text(call, "adRecipient").trim_start_matches("0x").to_lowercase())),
        &s.auth_token,
        &s.deadline,
        &s.signer,
        &s.signature,
    );
    w
}

pub(crate) fn lock(w: &World, call_key: &str, order_key: &str) -> Result<(), Error> {
    let env = &w.env;
    let v = &w.v["adManager"];
    let s = signed(env, &v[call_key]);
    match w.ad_manager.try_lock_for_order(&order(env, &v[order_key]), &s.auth_token, &s.deadline, &s.signer, &s.signature) {
        Ok(_) => Ok(()),
        Err(Ok(e)) => Err(e),
        Err(Err(e)) => panic!("lock trapped: {e:?}"),
    }
}

/// Submits an unlock vector for `order_key` with `proof`; a contract error or a host trap is Err.
pub(crate) fn unlock(w: &World, call_key: &str, order_key: &str, proof: &Bytes) -> Result<(), Option<Error>> {
    let env = &w.env;
    let v = &w.v["adManager"];
    let call = &v[call_key];
    let s = signed(env, call);
    match w.ad_manager.try_unlock(
        &order(env, &v[order_key]),
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

pub(crate) fn proof(w: &World) -> Bytes {
    bytes(&w.env, text(&w.v["adManager"]["proof"], "proof"))
}

pub(crate) fn fund(w: &World, call_key: &str) -> Result<(), Option<Error>> {
    let env = &w.env;
    let call = &w.v["adManager"][call_key];
    let s = signed(env, call);
    match w.ad_manager.try_fund_ad(&uuid_word(env, text(call, "adId")), &amount(call, "amount"), &s.auth_token, &s.deadline, &s.signer, &s.signature) {
        Ok(_) => Ok(()),
        Err(Ok(e)) => Err(Some(e)),
        Err(Err(_)) => Err(None),
    }
}

#[test]
fn creates_funds_withdraws_locks_unlocks_and_closes_with_the_relayers_requests() {
    let w = with_ad();
    let env = &w.env;
    let v = &w.v["adManager"];
    let ad_id = uuid_word(env, text(v, "adId"));
    let manager = w.ad_manager.address.clone();
    // create_ad's event is checked by event_fixtures.rs (the next call here resets the host's events).
    assert_eq!(w.balance(&manager), 1_000_000);
    assert_eq!(w.ad_manager.ad(&ad_id).unwrap().available, 1_000_000);

    fund(&w, "fundAd").unwrap();
    let e = expect_event(&w, &manager, "AdFunded", &signed(env, &v["fundAd"]).req_hash, &ad_id);
    assert_eq!(data_field(&e, "available"), soroban_sdk::xdr::ScVal::I128(soroban_sdk::xdr::Int128Parts { hi: 0, lo: 1_500_000 }));

    let call = &v["withdrawFromAd"];
    let s = signed(env, call);
    let maker_before = w.balance(&w.maker);
    w.ad_manager.withdraw_from_ad(&ad_id, &amount(call, "amount"), &address(env, text(call, "to")), &s.auth_token, &s.deadline, &s.signer, &s.signature);
    expect_event(&w, &manager, "AdWithdrawn", &s.req_hash, &ad_id);
    assert_eq!(w.balance(&w.maker) - maker_before, 200_000);

    let order_hash = bytes32(env, text(&v["order"], "hash"));
    assert_eq!(w.ad_manager.order_hash_of(&order(env, &v["order"])), order_hash, "the contract's order hash is chains/order.ts's");
    lock(&w, "lockForOrder", "order").unwrap();
    expect_event(&w, &manager, "OrderLocked", &signed(env, &v["lockForOrder"]).req_hash, &order_hash);
    assert_eq!(w.ad_manager.order_state(&order_hash), OrderState::Locked);
    let ad = w.ad_manager.ad(&ad_id).unwrap();
    assert_eq!((ad.available, ad.locked), (1_050_000, 250_000));

    let bridger_before = w.balance(&w.bridger);
    unlock(&w, "unlock", "order", &proof(&w)).unwrap();
    let e = expect_event(&w, &manager, "OrderUnlocked", &signed(env, &v["unlock"]).req_hash, &order_hash);
    assert_eq!(scval_u256(&data_field(&e, "nullifierHash")), word(text(v, "nullifierHash")));
    assert_eq!(w.balance(&w.bridger) - bridger_before, 250_000, "the Bridger's recipient is paid");
    assert_eq!(w.ad_manager.order_state(&order_hash), OrderState::Unlocked);
    assert!(w.ad_manager.nullifier_spent(&u256(env, text(v, "nullifierHash"))));

    let call = &v["closeAd"];
    let s = signed(env, call);
    let maker_before = w.balance(&w.maker);
    w.ad_manager.close_ad(&ad_id, &address(env, text(call, "to")), &s.auth_token, &s.deadline, &s.signer, &s.signature);
    expect_event(&w, &manager, "AdClosed", &s.req_hash, &ad_id);
    assert_eq!(w.balance(&w.maker) - maker_before, 1_050_000);
    assert_eq!(w.balance(&manager), 0);
}

#[test]
fn refuses_a_request_signed_by_another_key() {
    let w = with_ad();
    // The impostor's signature is over the very same request hash: only the key differs.
    assert_ne!(text(&w.v["adManager"]["fundAdWrongSigner"], "signerPublicKey"), text(&w.v["relayer"], "publicKey"));
    assert_eq!(fund(&w, "fundAdWrongSigner"), Err(Some(Error::InvalidSignature)), "a signer the contract does not trust");
    // Naming the relayer as signer does not help: the signature is not the relayer's.
    let env = &w.env;
    let call = &w.v["adManager"]["fundAdWrongSigner"];
    let s = signed(env, call);
    let relayer = account_key(env, text(&w.v["relayer"], "publicKey"));
    let trapped = w.ad_manager.try_fund_ad(&uuid_word(env, text(call, "adId")), &amount(call, "amount"), &s.auth_token, &s.deadline, &relayer, &s.signature);
    assert!(matches!(trapped, Err(Err(_))), "ed25519_verify traps");
    assert_eq!(w.ad_manager.ad(&uuid_word(&w.env, text(&w.v["adManager"], "adId"))).unwrap().available, 1_000_000);
}

#[test]
fn refuses_a_request_after_its_deadline() {
    let w = with_ad();
    let deadline = signed(&w.env, &w.v["adManager"]["fundAd"]).deadline;
    w.set_time(deadline + 1);
    assert_eq!(fund(&w, "fundAd"), Err(Some(Error::RequestExpired)));
    w.set_time(deadline);
    assert_eq!(fund(&w, "fundAd"), Ok(()), "valid up to and including the deadline second");
}

#[test]
fn refuses_a_replayed_auth_token() {
    let w = with_ad();
    fund(&w, "fundAd").unwrap();
    assert_eq!(fund(&w, "fundAd"), Err(Some(Error::AuthTokenUsed)));
}

#[test]
fn refuses_a_tampered_proof_and_accepts_the_real_one() {
    let w = with_ad();
    lock(&w, "lockForOrder", "order").unwrap();
    let real = proof(&w);
    // A on the curve but negated: the pairing check fails.
    let mut negated = real.clone();
    let mut a_y = [0u8; 32];
    real.slice(32..64).copy_into_slice(&mut a_y);
    let p = word("21888242871839275222246405745257275088696311157297823662689037894645226208583");
    let mut neg = [0u8; 32];
    let mut borrow = 0i32;
    for i in (0..32).rev() {
        let d = p[i] as i32 - a_y[i] as i32 - borrow;
        neg[i] = d.rem_euclid(256) as u8;
        borrow = if d < 0 { 1 } else { 0 };
    }
    negated.copy_from_slice(32, &neg);
    // The request stays valid (a fresh authToken is not needed: failed calls roll back).
    assert_eq!(unlock(&w, "unlock", "order", &negated), Err(Some(Error::InvalidProof)));
    // A flipped byte puts a point off the curve: the host refuses it.
    let mut flipped = real.clone();
    flipped.set(100, flipped.get(100).unwrap() ^ 1);
    assert!(unlock(&w, "unlock", "order", &flipped).is_err());
    // Another trade's proof (the OrderPortal vector's) proves another root and order.
    let other = bytes(&w.env, text(&w.v["orderPortal"]["proof"], "proof"));
    assert_eq!(unlock(&w, "unlock", "order", &other), Err(Some(Error::InvalidProof)));
    assert_eq!(unlock(&w, "unlock", "order", &real), Ok(()));
}

#[test]
fn refuses_a_spent_nullifier() {
    let w = with_ad();
    lock(&w, "lockForOrder", "order").unwrap();
    lock(&w, "lockSecondOrder", "secondOrder").unwrap();
    unlock(&w, "unlock", "order", &proof(&w)).unwrap();
    assert_eq!(unlock(&w, "unlockSecondOrderSpentNullifier", "secondOrder", &proof(&w)), Err(Some(Error::NullifierSpent)));
}

#[test]
fn refuses_an_order_it_did_not_lock_and_an_order_whose_fields_differ_from_the_signed_hash() {
    let w = with_ad();
    assert_eq!(unlock(&w, "unlock", "order", &proof(&w)), Err(Some(Error::WrongOrderState)));
    let env = &w.env;
    let v = &w.v["adManager"];
    let s = signed(env, &v["lockForOrder"]);
    let mut tampered = order(env, &v["order"]);
    tampered.ad_amount += 1;
    // The relayer signed the real order's hash: another order hashes differently and fails the signature.
    assert!(w.ad_manager.try_lock_for_order(&tampered, &s.auth_token, &s.deadline, &s.signer, &s.signature).is_err());
}

#[test]
fn both_contracts_hash_every_vector_order_as_chains_order_ts_does_binding_both_amounts() {
    let w = world();
    let env = &w.env;
    let am = &w.v["adManager"];
    let op = &w.v["orderPortal"];
    let mut orders = vec![am["order"].clone(), am["secondOrder"].clone(), am["edge"]["order"].clone(), op["edge"]["order"].clone()];
    orders.extend(am["orderChainDeposits"].as_array().unwrap().iter().map(|d| d["order"].clone()));
    orders.extend(op["deposits"].as_array().unwrap().iter().map(|d| d["order"].clone()));
    for o in &orders {
        let expected = bytes32(env, text(o, "hash"));
        let ours = order(env, o);
        // Each vector moves a different number on each chain (6- vs 7-decimal TUSD).
        assert_ne!(ours.order_amount, ours.ad_amount);
        assert_eq!(w.ad_manager.order_hash_of(&ours), expected, "AdManager's order hash is chains/order.ts's");
        assert_eq!(w.order_portal.order_hash_of(&ours), expected, "OrderPortal's order hash is chains/order.ts's");
        let mut swapped = ours.clone();
        swapped.order_amount = ours.ad_amount;
        swapped.ad_amount = ours.order_amount;
        assert_ne!(w.ad_manager.order_hash_of(&swapped), expected, "the amounts are bound to their side");
    }
}

/// Issue 33: the ad-side unlock is anyone's to submit (the Bridger's when its Maker is absent):
/// it requires no address's authorisation, so no account can be the only one able to send it, and
/// it pays the order's ad recipient whoever submits it.
#[test]
fn unlocks_without_anyones_authorisation_and_pays_the_ad_recipient() {
    let w = with_ad();
    lock(&w, "lockForOrder", "order").unwrap();
    // Not vacuous: the lock, which the Maker alone may make, is recorded as needing the Maker's authorisation.
    assert_eq!(w.env.auths().iter().map(|(who, _)| who.clone()).collect::<std::vec::Vec<_>>(), std::vec![w.maker.clone()]);
    let bridger_before = w.balance(&w.bridger);
    unlock(&w, "unlock", "order", &proof(&w)).unwrap();
    // mock_all_auths records every authorisation an invocation requires: the unlock required none.
    assert_eq!(w.env.auths(), std::vec![], "unlock asks nobody's authorisation");
    assert_eq!(w.balance(&w.bridger) - bridger_before, 250_000, "the order's ad recipient is paid");
}
