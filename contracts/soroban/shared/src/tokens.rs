//! Token moves through the SEP-41 token interface (the Stellar Asset Contract in tests).
use soroban_sdk::{token, Address, Env};

/// Takes `amount` of `token` from `from` (who authorised the call) into this contract.
pub fn pull(env: &Env, token: &Address, from: &Address, amount: i128) {
    if amount > 0 {
        token::Client::new(env, token).transfer(from, &env.current_contract_address(), &amount);
    }
}

/// Pays `amount` of `token` from this contract to `to`.
pub fn push(env: &Env, token: &Address, to: &Address, amount: i128) {
    if amount > 0 {
        token::Client::new(env, token).transfer(&env.current_contract_address(), to, &amount);
    }
}
