//! The hash time-lock paths in the Soroban host, on the ledger clock (`set_time`), as
//! contracts/evm/htlc.test.ts checks them on anvil: the OrderPortal's refund (from refundTime on,
//! if never unlocked) against the Maker's unlock (strictly before refundTime), the AdManager's
//! release_lock (from lockExpiry on, if never unlocked) against the Bridger's unlock (strictly
//! before lockExpiry), and the times and recipient checked at create_order and lock_for_order.
use crate::support::*;
use crate::{ad_manager, order_portal};
use relayer_soroban_ad_manager::OrderState as AdOrderState;
use relayer_soroban_order_portal::OrderState as PortalOrderState;
use relayer_soroban_shared::{Error, Order};
use serde_json::Value;
use soroban_sdk::{xdr, Address, BytesN};

/// The order's (lockExpiry, refundTime).
fn times(o: &Order) -> (u64, u64) {
    (o.lock_expiry, o.refund_time)
}

fn refund(w: &World, o: &Order) -> Result<(), Error> {
    match w.order_portal.try_refund(o) {
        Ok(_) => Ok(()),
        Err(Ok(e)) => Err(e),
        Err(Err(e)) => panic!("refund trapped: {e:?}"),
    }
}

fn release(w: &World, o: &Order) -> Result<(), Error> {
    match w.ad_manager.try_release_lock(o) {
        Ok(_) => Ok(()),
        Err(Ok(e)) => Err(e),
        Err(Err(e)) => panic!("release trapped: {e:?}"),
    }
}

/// Asserts the last invocation emitted exactly `name` with topics `[name, orderHash]` (no reqHash:
/// no relayer request is involved) and returns it.
fn expect_timeout_event(w: &World, contract: &Address, name: &str, order_hash: &BytesN<32>) -> xdr::ContractEvent {
    let events = events_of(w, contract);
    assert_eq!(events.len(), 1, "one event from the contract");
    let xdr::ContractEventBody::V0(body) = &events[0].body;
    assert_eq!(body.topics.len(), 2, "topics are [name, orderHash]");
    assert!(matches!(&body.topics[0], xdr::ScVal::Symbol(s) if s.to_utf8_string().unwrap() == name));
    assert!(matches!(&body.topics[1], xdr::ScVal::Bytes(b) if b.as_slice() == order_hash.to_array()));
    events[0].clone()
}

fn i128_val(amount: i128) -> xdr::ScVal {
    xdr::ScVal::I128(xdr::Int128Parts { hi: (amount >> 64) as i64, lo: amount as u64 })
}

// ---- OrderPortal: refund against the Maker's unlock ----

/// Our deposit (the one the proof is for) and the world holding all four deposits.
fn portal_order() -> (World, Order) {
    let w = order_portal::with_deposits();
    let o = order(&w.env, &order_portal::deposits(&w)[order_portal::ours(&w)]["order"]);
    (w, o)
}

#[test]
fn refuses_a_refund_before_refund_time() {
    let (w, o) = portal_order();
    let (_, refund_time) = times(&o);
    w.set_time(refund_time - 1);
    assert_eq!(refund(&w, &o), Err(Error::TooEarly));
    let hash = w.order_portal.order_hash_of(&o);
    assert_eq!(w.order_portal.order_state(&hash), PortalOrderState::Deposited);
}

#[test]
fn refunds_the_bridger_from_refund_time_on_and_then_refuses_the_unlock() {
    let (w, o) = portal_order();
    let env = &w.env;
    let portal = w.order_portal.address.clone();
    let hash = w.order_portal.order_hash_of(&o);
    let (_, refund_time) = times(&o);
    w.set_time(refund_time); // the boundary second: the refund's first
    let before = w.balance(&w.bridger);
    refund(&w, &o).unwrap();
    let e = expect_timeout_event(&w, &portal, "OrderRefunded", &hash);
    assert_eq!(data_field(&e, "amount"), i128_val(o.order_amount));
    assert_eq!(data_field(&e, "recipient"), xdr::ScVal::Address(w.bridger.clone().try_into().unwrap()));
    assert_eq!(w.balance(&w.bridger) - before, o.order_amount, "the Bridger has the deposit back");
    assert_eq!(w.order_portal.order_state(&hash), PortalOrderState::Refunded);

    assert_eq!(refund(&w, &o), Err(Error::WrongOrderState), "refunded once only");
    let proof = order_portal::proof(&w);
    let ours = order_portal::ours(&w);
    assert_eq!(order_portal::unlock(&w, "unlockLate", ours, &proof), Err(Some(Error::WrongOrderState)), "a refunded deposit is never unlocked");
    assert!(!w.order_portal.nullifier_spent(&u256(env, text(&w.v["orderPortal"]["unlockLate"], "nullifierHash"))));
}

#[test]
fn refuses_the_makers_unlock_at_refund_time_and_takes_it_a_second_before() {
    let (w, o) = portal_order();
    let (_, refund_time) = times(&o);
    let proof = order_portal::proof(&w);
    let ours = order_portal::ours(&w);
    w.set_time(refund_time);
    assert_eq!(order_portal::unlock(&w, "unlockLate", ours, &proof), Err(Some(Error::TooLate)));
    w.set_time(refund_time - 1);
    let maker_before = w.balance(&w.maker);
    order_portal::unlock(&w, "unlockLate", ours, &proof).unwrap();
    assert_eq!(w.balance(&w.maker) - maker_before, o.order_amount, "the Maker is paid");
}

#[test]
fn refuses_a_refund_after_the_unlock() {
    let (w, o) = portal_order();
    let (_, refund_time) = times(&o);
    let proof = order_portal::proof(&w);
    order_portal::unlock(&w, "unlock", order_portal::ours(&w), &proof).unwrap();
    w.set_time(refund_time);
    let before = w.balance(&w.bridger);
    assert_eq!(refund(&w, &o), Err(Error::WrongOrderState));
    assert_eq!(w.balance(&w.bridger), before);
    assert_eq!(refund(&w, &order(&w.env, &w.v["adManager"]["order"])), Err(Error::WrongOrderState), "an order never deposited here");
}

#[test]
fn refuses_deposits_whose_times_are_not_a_hash_time_lock_and_takes_one_at_the_limits() {
    let w = world();
    for case in w.v["orderPortal"]["createRefused"].as_array().unwrap() {
        assert_eq!(order_portal::deposit(&w, case), Err(Some(Error::InvalidTimes)), "{}", text(case, "why"));
    }
    let edge = &w.v["orderPortal"]["edge"];
    order_portal::deposit(&w, edge).unwrap();
    let o = order(&w.env, &edge["order"]);
    assert_eq!(w.order_portal.order_state(&w.order_portal.order_hash_of(&o)), PortalOrderState::Deposited);
}

// ---- AdManager: release_lock against the Bridger's unlock ----

/// The ad created and the vectors' order locked against it.
fn locked() -> (World, Order) {
    let w = ad_manager::with_ad();
    ad_manager::lock(&w, "lockForOrder", "order").unwrap();
    let o = order(&w.env, &w.v["adManager"]["order"]);
    (w, o)
}

fn ad_balances(w: &World, o: &Order) -> (i128, i128) {
    let ad = w.ad_manager.ad(&o.ad_id).unwrap();
    (ad.available, ad.locked)
}

#[test]
fn refuses_a_release_before_lock_expiry() {
    let (w, o) = locked();
    let (lock_expiry, _) = times(&o);
    w.set_time(lock_expiry - 1);
    assert_eq!(release(&w, &o), Err(Error::TooEarly));
    assert_eq!(ad_balances(&w, &o), (750_000, 250_000));
}

#[test]
fn releases_the_lock_to_the_ad_from_lock_expiry_on_and_then_refuses_the_unlock() {
    let (w, o) = locked();
    let manager = w.ad_manager.address.clone();
    let hash = w.ad_manager.order_hash_of(&o);
    let (lock_expiry, _) = times(&o);
    w.set_time(lock_expiry); // the boundary second: the release's first
    release(&w, &o).unwrap();
    let e = expect_timeout_event(&w, &manager, "LockReleased", &hash);
    assert_eq!(data_field(&e, "amount"), i128_val(o.ad_amount));
    assert_eq!(ad_balances(&w, &o), (1_000_000, 0), "the lock is available again");
    assert_eq!(w.ad_manager.order_state(&hash), AdOrderState::Released);
    assert_eq!(release(&w, &o), Err(Error::WrongOrderState), "released once only");
    let proof = ad_manager::proof(&w);
    assert_eq!(ad_manager::unlock(&w, "unlockLate", "order", &proof), Err(Some(Error::WrongOrderState)), "a released lock is never unlocked");
}

#[test]
fn releases_a_lock_of_a_closed_ad_to_its_creator() {
    let (w, o) = locked();
    let env = &w.env;
    let call = &w.v["adManager"]["closeAd"];
    let s = signed(env, call);
    w.ad_manager.close_ad(&o.ad_id, &address(env, text(call, "to")), &s.auth_token, &s.deadline, &s.signer, &s.signature);
    w.set_time(times(&o).0);
    let before = w.balance(&w.maker);
    release(&w, &o).unwrap();
    assert_eq!(w.balance(&w.maker) - before, o.ad_amount, "the Maker has the lock back");
    assert_eq!(ad_balances(&w, &o), (0, 0));
}

#[test]
fn refuses_the_bridgers_unlock_at_lock_expiry_and_takes_it_a_second_before() {
    let (w, o) = locked();
    let (lock_expiry, _) = times(&o);
    let proof = ad_manager::proof(&w);
    w.set_time(lock_expiry);
    assert_eq!(ad_manager::unlock(&w, "unlockLate", "order", &proof), Err(Some(Error::TooLate)));
    w.set_time(lock_expiry - 1);
    let before = w.balance(&w.bridger);
    ad_manager::unlock(&w, "unlockLate", "order", &proof).unwrap();
    assert_eq!(w.balance(&w.bridger) - before, o.ad_amount, "the Bridger is paid");
}

#[test]
fn refuses_a_release_after_the_unlock() {
    let (w, o) = locked();
    let proof = ad_manager::proof(&w);
    ad_manager::unlock(&w, "unlock", "order", &proof).unwrap();
    w.set_time(times(&o).0);
    assert_eq!(release(&w, &o), Err(Error::WrongOrderState));
    assert_eq!(ad_balances(&w, &o), (750_000, 0));
    assert_eq!(release(&w, &order(&w.env, &w.v["adManager"]["secondOrder"])), Err(Error::WrongOrderState), "an order never locked");
}

/// Locks `case["order"]` with `case["lockForOrder"]`.
fn lock_case(w: &World, case: &Value) -> Result<(), Error> {
    let env = &w.env;
    let s = signed(env, &case["lockForOrder"]);
    match w.ad_manager.try_lock_for_order(&order(env, &case["order"]), &s.auth_token, &s.deadline, &s.signer, &s.signature) {
        Ok(_) => Ok(()),
        Err(Ok(e)) => Err(e),
        Err(Err(e)) => panic!("lock trapped: {e:?}"),
    }
}

#[test]
fn refuses_to_lock_an_order_paying_another_recipient_or_with_bad_times_and_locks_one_at_the_limits() {
    let w = ad_manager::with_ad();
    for case in w.v["adManager"]["lockRefused"].as_array().unwrap() {
        let why = text(case, "why");
        let expected = if why.starts_with("OrderMismatch") { Error::OrderMismatch } else { Error::InvalidTimes };
        assert_eq!(lock_case(&w, case), Err(expected), "{why}");
    }
    let edge = &w.v["adManager"]["edge"];
    lock_case(&w, edge).unwrap();
    let o = order(&w.env, &edge["order"]);
    assert_eq!(w.ad_manager.order_state(&w.ad_manager.order_hash_of(&o)), AdOrderState::Locked);
}
