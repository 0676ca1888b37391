//! What the expensive calls cost in the host's metering (CPU instructions and memory bytes), against
//! the network's per-transaction limits. Natively run tests meter the host functions (Poseidon,
//! BN254, storage, crypto) but not the contract's own wasm instructions, so the real figure is
//! somewhat higher; the margin below is kept wide for that.
use crate::support::*;

/// Soroban's per-transaction limits on mainnet (CPU instructions, memory bytes).
const TX_MAX_INSTRUCTIONS: u64 = 100_000_000;
const TX_MAX_MEMORY: u64 = 40 * 1024 * 1024;

fn measure(w: &World, what: &str, f: impl FnOnce()) -> (u64, u64) {
    w.env.cost_estimate().budget().reset_unlimited();
    f();
    let b = w.env.cost_estimate().budget();
    let (cpu, mem) = (b.cpu_instruction_cost(), b.memory_bytes_cost());
    println!("{what}: {cpu} CPU instructions, {mem} memory bytes");
    (cpu, mem)
}

#[test]
fn a_deposit_and_an_unlock_each_fit_half_a_transactions_budget() {
    let w = world();
    let env = &w.env;
    let op = &w.v["orderPortal"];
    let deposits = op["deposits"].as_array().unwrap().clone();
    let mut worst = (0, 0);
    for (i, d) in deposits.iter().enumerate() {
        let call = &d["createOrder"];
        let s = signed(env, call);
        let cost = measure(&w, &format!("create_order #{i} (Poseidon3 leaf + 20 Poseidon2)"), || {
            w.order_portal.create_order(&w.bridger, &order(env, &d["order"]), &u256(env, text(call, "secretCommitment")), &s.auth_token, &s.deadline, &s.signer, &s.signature);
        });
        worst = (worst.0.max(cost.0), worst.1.max(cost.1));
    }
    let call = &op["unlock"];
    let s = signed(env, call);
    let ours = &deposits[op["ours"].as_u64().unwrap() as usize];
    let proof = bytes(env, text(&op["proof"], "proof"));
    let unlock = measure(&w, "OrderPortal.unlock (Groth16: 4 G1 mul, 4-pairing check)", || {
        w.order_portal.unlock(&order(env, &ours["order"]), &u256(env, text(call, "nullifierHash")), &u256(env, text(call, "targetRoot")), &proof, &s.auth_token, &s.deadline, &s.signer, &s.signature);
    });
    for (cpu, mem) in [worst, unlock] {
        assert!(cpu < TX_MAX_INSTRUCTIONS / 2, "{cpu} CPU instructions");
        assert!(mem < TX_MAX_MEMORY / 2, "{mem} memory bytes");
    }
}
