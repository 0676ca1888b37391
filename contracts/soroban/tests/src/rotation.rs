//! Relayer key rotation without downtime in the Soroban host, as contracts/evm/rotation.test.ts
//! checks it on anvil: after the admin's `rotate_relayer`, requests the previous key signed still
//! execute while the grace period lasts and are refused (`InvalidSignature`) from its end on; the
//! new key's requests execute; only the admin may rotate or move the grace period's end.
//! The vectors' relayer key is the previous key; the new key is the one that signed
//! `fundAdWrongSigner` (over the same request as `fundAd`, so one of the two can execute).
use crate::ad_manager::{fund, with_ad};
use crate::support::*;
use relayer_soroban_shared::{requests::PreviousRelayer, Error};
use soroban_sdk::testutils::{Ledger, MockAuth, MockAuthInvoke};
use soroban_sdk::{Address, BytesN, IntoVal};

const GRACE: u64 = 300;

fn old_key(w: &World) -> BytesN<32> {
    account_key(&w.env, text(&w.v["relayer"], "publicKey"))
}

fn new_key(w: &World) -> BytesN<32> {
    account_key(&w.env, text(&w.v["adManager"]["fundAdWrongSigner"], "signerPublicKey"))
}

fn withdraw(w: &World) -> Result<(), Option<Error>> {
    let env = &w.env;
    let call = &w.v["adManager"]["withdrawFromAd"];
    let s = signed(env, call);
    match w.ad_manager.try_withdraw_from_ad(
        &uuid_word(env, text(call, "adId")),
        &amount(call, "amount"),
        &address(env, text(call, "to")),
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

/// The ad's creation, then a rotation from the vectors' relayer key to the new key at the vectors' ledger time.
fn rotated() -> (World, u64) {
    let w = with_ad();
    let now = w.env.ledger().timestamp();
    w.ad_manager.rotate_relayer(&new_key(&w), &GRACE);
    (w, now)
}

#[test]
fn the_previous_key_signs_within_the_grace_period_and_the_new_key_from_the_rotation() {
    let (w, now) = rotated();
    assert_eq!(w.ad_manager.relayer(), new_key(&w));
    assert_eq!(w.ad_manager.previous_relayer(), Some(PreviousRelayer { key: old_key(&w), until: now + GRACE }));
    // A request the service signed with the old key before its switch executes during the grace period.
    w.set_time(now + GRACE - 1);
    assert_eq!(withdraw(&w), Ok(()), "old key, last second of the grace period");
    // The new key's request executes.
    assert_eq!(fund(&w, "fundAdWrongSigner"), Ok(()), "new key");
}

#[test]
fn the_previous_key_is_refused_from_the_end_of_the_grace_period() {
    let (w, now) = rotated();
    w.set_time(now + GRACE);
    assert_eq!(withdraw(&w), Err(Some(Error::InvalidSignature)), "old key, grace period over");
    assert_eq!(fund(&w, "fundAd"), Err(Some(Error::InvalidSignature)), "old key, grace period over");
    assert_eq!(fund(&w, "fundAdWrongSigner"), Ok(()), "the new key still signs");
}

#[test]
fn the_admin_ends_the_grace_period_early() {
    let (w, now) = rotated();
    w.ad_manager.set_previous_relayer_until(&now);
    assert_eq!(withdraw(&w), Err(Some(Error::InvalidSignature)), "old key after the grace period was ended");
    // And extends it again (a switch delayed).
    w.ad_manager.set_previous_relayer_until(&(now + 10));
    assert_eq!(withdraw(&w), Ok(()));
}

#[test]
fn before_any_rotation_only_the_deployed_key_signs() {
    let w = with_ad();
    assert_eq!(w.ad_manager.previous_relayer(), None);
    assert_eq!(w.ad_manager.relayer(), old_key(&w));
    assert_eq!(fund(&w, "fundAdWrongSigner"), Err(Some(Error::InvalidSignature)));
    assert_eq!(w.order_portal.relayer(), old_key(&w));
}

/// `rotate_relayer` / `set_previous_relayer_until` as authorised by `who` alone (no blanket mock).
fn as_caller(w: &World, who: &Address, function: &str, args: soroban_sdk::Vec<soroban_sdk::Val>) {
    let contract = w.ad_manager.address.clone();
    w.env.mock_auths(&[MockAuth { address: who, invoke: &MockAuthInvoke { contract: &contract, fn_name: function, args, sub_invokes: &[] } }]);
}

#[test]
fn only_the_admin_rotates_or_moves_the_grace_period() {
    let w = with_ad();
    let env = &w.env;
    let stranger = <Address as soroban_sdk::testutils::Address>::generate(env);
    let next = new_key(&w);

    as_caller(&w, &stranger, "rotate_relayer", (next.clone(), GRACE).into_val(env));
    assert!(w.ad_manager.try_rotate_relayer(&next, &GRACE).is_err(), "a stranger cannot rotate");
    assert_eq!(w.ad_manager.relayer(), old_key(&w));

    as_caller(&w, &w.admin, "rotate_relayer", (next.clone(), GRACE).into_val(env));
    assert!(w.ad_manager.try_rotate_relayer(&next, &GRACE).is_ok(), "the admin rotates");
    assert_eq!(w.ad_manager.relayer(), next);

    as_caller(&w, &stranger, "set_previous_relayer_until", (0u64,).into_val(env));
    assert!(w.ad_manager.try_set_previous_relayer_until(&0).is_err(), "a stranger cannot end the grace period");
    as_caller(&w, &w.admin, "set_previous_relayer_until", (0u64,).into_val(env));
    assert!(w.ad_manager.try_set_previous_relayer_until(&0).is_ok());
    assert_eq!(w.ad_manager.previous_relayer().unwrap().until, 0);
    assert_eq!(w.ad_manager.admin(), w.admin);
}
