//! A minimal SEP-41 token for the local Stellar devnet (devnet/stellar): the admin set at
//! construction mints; holders transfer, approve and burn as SEP-41 says. Events follow the
//! SEP-41 topics (`transfer`, `approve`, `burn`, `mint` with the addresses as topics). It is a
//! test asset, not a production token: no clawback, no freezing, no admin change, and its
//! balances and allowances live in persistent storage without TTL extension.
#![no_std]

use soroban_sdk::{contract, contracterror, contractevent, contractimpl, contracttype, panic_with_error, Address, Env, String};

/// SEP-41 `mint`: topics `["mint", admin, to]`, data the amount.
#[contractevent(topics = ["mint"], data_format = "single-value")]
struct Mint {
    #[topic]
    admin: Address,
    #[topic]
    to: Address,
    amount: i128,
}

/// SEP-41 `transfer`: topics `["transfer", from, to]`, data the amount.
#[contractevent(topics = ["transfer"], data_format = "single-value")]
struct Transfer {
    #[topic]
    from: Address,
    #[topic]
    to: Address,
    amount: i128,
}

/// SEP-41 `approve`: topics `["approve", from, spender]`, data `[amount, expiration_ledger]`.
#[contractevent(topics = ["approve"], data_format = "vec")]
struct Approve {
    #[topic]
    from: Address,
    #[topic]
    spender: Address,
    amount: i128,
    expiration_ledger: u32,
}

/// SEP-41 `burn`: topics `["burn", from]`, data the amount.
#[contractevent(topics = ["burn"], data_format = "single-value")]
struct Burn {
    #[topic]
    from: Address,
    amount: i128,
}

#[contracttype]
enum Key {
    Admin,
    Name,
    Symbol,
    Decimals,
    Balance(Address),
    Allowance(Address, Address),
}

/// An allowance and the last ledger it may be used in.
#[contracttype]
#[derive(Clone)]
struct Allowance {
    amount: i128,
    expiration_ledger: u32,
}

#[contracterror]
#[derive(Copy, Clone, Debug, Eq, PartialEq)]
#[repr(u32)]
pub enum TokenError {
    NegativeAmount = 1,
    InsufficientBalance = 2,
    InsufficientAllowance = 3,
    PastExpiration = 4,
    Overflow = 5,
}

#[contract]
pub struct TestToken;

fn balance_of(env: &Env, id: &Address) -> i128 {
    env.storage().persistent().get(&Key::Balance(id.clone())).unwrap_or(0)
}

fn set_balance(env: &Env, id: &Address, amount: i128) {
    env.storage().persistent().set(&Key::Balance(id.clone()), &amount);
}

fn non_negative(env: &Env, amount: i128) {
    if amount < 0 {
        panic_with_error!(env, TokenError::NegativeAmount);
    }
}

fn debit(env: &Env, from: &Address, amount: i128) {
    let balance = balance_of(env, from);
    if balance < amount {
        panic_with_error!(env, TokenError::InsufficientBalance);
    }
    set_balance(env, from, balance - amount);
}

fn credit(env: &Env, to: &Address, amount: i128) {
    let balance = balance_of(env, to).checked_add(amount).unwrap_or_else(|| panic_with_error!(env, TokenError::Overflow));
    set_balance(env, to, balance);
}

fn live_allowance(env: &Env, from: &Address, spender: &Address) -> i128 {
    let stored: Option<Allowance> = env.storage().temporary().get(&Key::Allowance(from.clone(), spender.clone()));
    match stored {
        Some(a) if a.expiration_ledger >= env.ledger().sequence() => a.amount,
        _ => 0,
    }
}

fn spend_allowance(env: &Env, from: &Address, spender: &Address, amount: i128) {
    let key = Key::Allowance(from.clone(), spender.clone());
    let stored: Option<Allowance> = env.storage().temporary().get(&key);
    let Some(mut allowance) = stored.filter(|a| a.expiration_ledger >= env.ledger().sequence()) else {
        if amount > 0 {
            panic_with_error!(env, TokenError::InsufficientAllowance);
        }
        return;
    };
    if allowance.amount < amount {
        panic_with_error!(env, TokenError::InsufficientAllowance);
    }
    allowance.amount -= amount;
    env.storage().temporary().set(&key, &allowance);
}

#[contractimpl]
impl TestToken {
    /// `admin` mints; `decimals`, `name` and `symbol` are what wallets show.
    pub fn __constructor(env: Env, admin: Address, decimals: u32, name: String, symbol: String) {
        env.storage().instance().set(&Key::Admin, &admin);
        env.storage().instance().set(&Key::Decimals, &decimals);
        env.storage().instance().set(&Key::Name, &name);
        env.storage().instance().set(&Key::Symbol, &symbol);
    }

    /// Creates `amount` for `to`; the admin must authorise.
    pub fn mint(env: Env, to: Address, amount: i128) {
        non_negative(&env, amount);
        let admin: Address = env.storage().instance().get(&Key::Admin).expect("constructed");
        admin.require_auth();
        credit(&env, &to, amount);
        Mint { admin, to, amount }.publish(&env);
    }

    pub fn allowance(env: Env, from: Address, spender: Address) -> i128 {
        live_allowance(&env, &from, &spender)
    }

    pub fn approve(env: Env, from: Address, spender: Address, amount: i128, expiration_ledger: u32) {
        from.require_auth();
        non_negative(&env, amount);
        if amount > 0 && expiration_ledger < env.ledger().sequence() {
            panic_with_error!(&env, TokenError::PastExpiration);
        }
        let key = Key::Allowance(from.clone(), spender.clone());
        env.storage().temporary().set(&key, &Allowance { amount, expiration_ledger });
        if amount > 0 {
            let live_for = expiration_ledger - env.ledger().sequence();
            env.storage().temporary().extend_ttl(&key, live_for, live_for);
        }
        Approve { from, spender, amount, expiration_ledger }.publish(&env);
    }

    pub fn balance(env: Env, id: Address) -> i128 {
        balance_of(&env, &id)
    }

    pub fn transfer(env: Env, from: Address, to: Address, amount: i128) {
        from.require_auth();
        non_negative(&env, amount);
        debit(&env, &from, amount);
        credit(&env, &to, amount);
        Transfer { from, to, amount }.publish(&env);
    }

    pub fn transfer_from(env: Env, spender: Address, from: Address, to: Address, amount: i128) {
        spender.require_auth();
        non_negative(&env, amount);
        spend_allowance(&env, &from, &spender, amount);
        debit(&env, &from, amount);
        credit(&env, &to, amount);
        Transfer { from, to, amount }.publish(&env);
    }

    pub fn burn(env: Env, from: Address, amount: i128) {
        from.require_auth();
        non_negative(&env, amount);
        debit(&env, &from, amount);
        Burn { from, amount }.publish(&env);
    }

    pub fn burn_from(env: Env, spender: Address, from: Address, amount: i128) {
        spender.require_auth();
        non_negative(&env, amount);
        spend_allowance(&env, &from, &spender, amount);
        debit(&env, &from, amount);
        Burn { from, amount }.publish(&env);
    }

    pub fn decimals(env: Env) -> u32 {
        env.storage().instance().get(&Key::Decimals).expect("constructed")
    }

    pub fn name(env: Env) -> String {
        env.storage().instance().get(&Key::Name).expect("constructed")
    }

    pub fn symbol(env: Env) -> String {
        env.storage().instance().get(&Key::Symbol).expect("constructed")
    }
}
