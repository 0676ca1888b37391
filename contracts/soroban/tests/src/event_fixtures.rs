//! Writes (or checks) ../fixtures/events.json: every event both contracts emit in one whole run of
//! the vectors, as the Soroban host serialises it (ContractEvent XDR). chains/stellar's tests read
//! these instead of events built by hand. `SOROBAN_WRITE_FIXTURES=1 cargo test` rewrites the file;
//! otherwise a difference fails the test.
use crate::support::*;
use serde_json::{json, Value};
use soroban_sdk::{
    xdr::{Limits, WriteXdr},
    Address,
};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/events.json");

fn record(w: &World, out: &mut Vec<Value>, action: &str, function: &str, contract: &Address, contract_id: &str) {
    for event in events_of(w, contract) {
        let (name, req_hash, key) = topics(&event);
        out.push(json!({
            "action": action,
            "function": function,
            "contractId": contract_id,
            "event": name,
            "reqHash": format!("0x{}", hex::encode(req_hash)),
            "key": format!("0x{}", hex::encode(key)),
            "xdr": hex::encode(event.to_xdr(Limits::none()).expect("xdr")),
        }));
    }
}

fn run_everything() -> Value {
    let w = world();
    let env = &w.env;
    let v = w.v.clone();
    let am = &v["adManager"];
    let am_id = text(&v["contracts"], "adManager");
    let op_id = text(&v["contracts"], "orderPortal");
    let manager = w.ad_manager.address.clone();
    let portal = w.order_portal.address.clone();
    let mut out = vec![];
    let ad_id = uuid_word(env, text(am, "adId"));

    let call = &am["createAd"];
    let s = signed(env, call);
    let recipient = format!("0x{:0>64}", text(call, "adRecipient").trim_start_matches("0x").to_lowercase());
    w.ad_manager.create_ad(&w.maker, &ad_id, &w.token, &amount(call, "initialAmount"), &u256(env, text(call, "orderChainId")), &bytes32(env, &recipient), &s.auth_token, &s.deadline, &s.signer, &s.signature);
    record(&w, &mut out, "createAd", "create_ad", &manager, am_id);

    let call = &am["fundAd"];
    let s = signed(env, call);
    w.ad_manager.fund_ad(&ad_id, &amount(call, "amount"), &s.auth_token, &s.deadline, &s.signer, &s.signature);
    record(&w, &mut out, "fundAd", "fund_ad", &manager, am_id);

    let call = &am["withdrawFromAd"];
    let s = signed(env, call);
    w.ad_manager.withdraw_from_ad(&ad_id, &amount(call, "amount"), &address(env, text(call, "to")), &s.auth_token, &s.deadline, &s.signer, &s.signature);
    record(&w, &mut out, "withdrawFromAd", "withdraw_from_ad", &manager, am_id);

    let s = signed(env, &am["lockForOrder"]);
    w.ad_manager.lock_for_order(&order(env, &am["order"]), &s.auth_token, &s.deadline, &s.signer, &s.signature);
    record(&w, &mut out, "lockForOrder", "lock_for_order", &manager, am_id);

    let call = &am["unlock"];
    let s = signed(env, call);
    let proof = bytes(env, text(&am["proof"], "proof"));
    w.ad_manager.unlock(&order(env, &am["order"]), &u256(env, text(call, "nullifierHash")), &u256(env, text(call, "targetRoot")), &proof, &s.auth_token, &s.deadline, &s.signer, &s.signature);
    record(&w, &mut out, "unlock", "unlock", &manager, am_id);

    let call = &am["closeAd"];
    let s = signed(env, call);
    w.ad_manager.close_ad(&ad_id, &address(env, text(call, "to")), &s.auth_token, &s.deadline, &s.signer, &s.signature);
    record(&w, &mut out, "closeAd", "close_ad", &manager, am_id);

    let op = &v["orderPortal"];
    let deposits = op["deposits"].as_array().unwrap();
    for d in deposits {
        let call = &d["createOrder"];
        let s = signed(env, call);
        w.order_portal.create_order(&w.bridger, &order(env, &d["order"]), &u256(env, text(call, "secretCommitment")), &s.auth_token, &s.deadline, &s.signer, &s.signature);
        record(&w, &mut out, "createOrder", "create_order", &portal, op_id);
    }
    let call = &op["unlock"];
    let s = signed(env, call);
    let ours = &deposits[op["ours"].as_u64().unwrap() as usize];
    let proof = bytes(env, text(&op["proof"], "proof"));
    w.order_portal.unlock(&order(env, &ours["order"]), &u256(env, text(call, "nullifierHash")), &u256(env, text(call, "targetRoot")), &proof, &s.auth_token, &s.deadline, &s.signer, &s.signature);
    record(&w, &mut out, "unlock", "unlock", &portal, op_id);

    json!({
        "generatedBy": "contracts/soroban/tests/src/event_fixtures.rs (SOROBAN_WRITE_FIXTURES=1 cargo test)",
        "about": "Contract events emitted by the reference Soroban AdManager/OrderPortal in the Soroban host for contracts/soroban/vectors.json, ContractEvent XDR in hex.",
        "networkPassphrase": text(&v["network"], "passphrase"),
        "events": out,
    })
}

#[test]
fn the_committed_event_fixtures_are_what_the_contracts_emit() {
    let produced = format!("{}\n", serde_json::to_string_pretty(&run_everything()).unwrap());
    assert_eq!(produced.matches("\"event\"").count(), 11, "one event per call");
    if std::env::var("SOROBAN_WRITE_FIXTURES").as_deref() == Ok("1") {
        std::fs::create_dir_all(std::path::Path::new(FIXTURE).parent().unwrap()).unwrap();
        std::fs::write(FIXTURE, &produced).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(FIXTURE).unwrap_or_default();
    assert!(
        committed == produced,
        "contracts/soroban/fixtures/events.json is stale or missing: run `SOROBAN_WRITE_FIXTURES=1 cargo test` and commit it"
    );
}
