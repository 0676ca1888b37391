//! Reference OrderPortal for Soroban (order chain), mirroring contracts/evm/src/OrderPortal.sol:
//! takes the Bridger's deposit under a relayer-signed request, appends
//! `Poseidon3(orderHashHi, orderHashLo, secretCommitment)` to its depth-20 Poseidon tree, and
//! releases the deposit to the order-chain recipient (the Maker) with the trade's Groth16 proof
//! against one of its last 100 roots, before the order's refund_time; from refund_time on, a deposit
//! never unlocked goes back to the Bridger (refund), and then it can no longer be unlocked.
#![no_std]

use relayer_soroban_shared::{
    events::{OrderCreated, OrderRefunded, OrderUnlocked, PreviousRelayerGraceSet, RelayerRotated},
    order::{order_hash, split, Order},
    poseidon::{is_field, Poseidon},
    requests::{self, consume, consume_unlock, types, PreviousRelayer, Request, Unlock},
    settle::{is_spent, spend_with_proof},
    times,
    tokens::{pull, push},
    tree,
    words::{address_word, word_address, WordSink},
    Error,
};
use soroban_sdk::{contract, contractimpl, contracttype, Address, Bytes, BytesN, Env, String, U256};

/// Where an order is on this chain.
#[contracttype]
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum OrderState {
    None = 0,
    Deposited = 1,
    Unlocked = 2,
    Refunded = 3,
}

#[contracttype]
enum Key {
    Order(BytesN<32>),
}

#[contract]
pub struct OrderPortal;

#[contractimpl]
impl OrderPortal {
    /// Trusts `relayer` (ed25519 key; `admin` may rotate it) for requests signed for `chain_id` under the domain
    /// {`name`, `version`}; starts the empty tree.
    pub fn __constructor(env: Env, relayer: BytesN<32>, chain_id: U256, name: String, version: String, admin: Address) {
        requests::init(&env, relayer, chain_id, name, version, admin);
        tree::init(&env);
    }

    /// The Bridger's deposit of `order.order_amount` of the order-chain token; `bridger` authorises
    /// the call and must be the order's `bridger`.
    pub fn create_order(
        env: Env,
        bridger: Address,
        order: Order,
        secret_commitment: U256,
        auth_token: BytesN<32>,
        deadline: u64,
        signer: BytesN<32>,
        signature: BytesN<64>,
    ) -> Result<(), Error> {
        bridger.require_auth();
        let config = requests::config(&env);
        let hash = order_hash(&env, &config.order_domain, &order)?;
        let mut f = Bytes::new(&env);
        f.push_bytesn(&hash);
        f.push_u256(&secret_commitment);
        let req_hash =
            consume(&env, &Request { type_string: types::CREATE_ORDER, auth_token: &auth_token, deadline, fields: f }, &signer, &signature)?;
        if order.order_chain_id != config.chain_id || order.order_portal != address_word(&env.current_contract_address()) {
            return Err(Error::NotForThisContract);
        }
        if order.bridger != address_word(&bridger) {
            return Err(Error::OrderMismatch);
        }
        if !is_field(&env, &secret_commitment) {
            return Err(Error::NotAField);
        }
        times::check_times(&env, &order)?;
        if Self::order_state(env.clone(), hash.clone()) != OrderState::None {
            return Err(Error::WrongOrderState);
        }
        env.storage().persistent().set(&Key::Order(hash.clone()), &OrderState::Deposited);
        let (hi, lo) = split(&env, &hash);
        let leaf = Poseidon::three(&env).hash3(&hi, &lo, &secret_commitment);
        let (leaf_index, root) = tree::insert(&env, leaf.clone())?;
        pull(&env, &word_address(&env, &order.order_chain_token), &bridger, order.order_amount);
        OrderCreated { reqHash: req_hash, orderHash: hash, leafIndex: leaf_index, leaf, secretCommitment: secret_commitment, root }
            .publish(&env);
        Ok(())
    }

    /// Releases a deposit to its order-chain recipient (the Maker), whoever submits it.
    #[allow(clippy::too_many_arguments)]
    pub fn unlock(
        env: Env,
        order: Order,
        nullifier_hash: U256,
        target_root: U256,
        proof: Bytes,
        auth_token: BytesN<32>,
        deadline: u64,
        signer: BytesN<32>,
        signature: BytesN<64>,
    ) -> Result<(), Error> {
        let Unlock { order_hash: hash, req_hash } =
            consume_unlock(&env, &order, &nullifier_hash, &target_root, &auth_token, deadline, &signer, &signature)?;
        if Self::order_state(env.clone(), hash.clone()) != OrderState::Deposited {
            return Err(Error::WrongOrderState);
        }
        times::before(&env, order.refund_time)?;
        if !tree::is_known_root(&env, &target_root) {
            return Err(Error::UnknownRoot);
        }
        spend_with_proof(&env, &hash, &target_root, &nullifier_hash, &proof)?;
        env.storage().persistent().set(&Key::Order(hash.clone()), &OrderState::Unlocked);
        let recipient = word_address(&env, &order.order_recipient);
        push(&env, &word_address(&env, &order.order_chain_token), &recipient, order.order_amount);
        OrderUnlocked { reqHash: req_hash, orderHash: hash, nullifierHash: nullifier_hash, recipient, amount: order.order_amount }
            .publish(&env);
        Ok(())
    }

    /// From the order's refund_time on, returns a deposit that was never unlocked to the Bridger.
    /// Needs no relayer signature (the way out when the service is gone) and no authorisation:
    /// anyone may submit it, the Bridger is paid.
    pub fn refund(env: Env, order: Order) -> Result<(), Error> {
        let hash = order_hash(&env, &requests::config(&env).order_domain, &order)?;
        if Self::order_state(env.clone(), hash.clone()) != OrderState::Deposited {
            return Err(Error::WrongOrderState);
        }
        times::from(&env, order.refund_time)?;
        env.storage().persistent().set(&Key::Order(hash.clone()), &OrderState::Refunded);
        let recipient = word_address(&env, &order.bridger);
        push(&env, &word_address(&env, &order.order_chain_token), &recipient, order.order_amount);
        OrderRefunded { orderHash: hash, recipient, amount: order.order_amount }.publish(&env);
        Ok(())
    }

    /// The root after the latest deposit (the empty tree's before any).
    pub fn current_root(env: Env) -> U256 {
        tree::current_root(&env)
    }

    /// Number of deposits, which is the index the next one gets.
    pub fn next_leaf_index(env: Env) -> u32 {
        tree::state(&env).next_index
    }

    /// True when `root` is one of the last 100 roots.
    pub fn is_known_root(env: Env, root: U256) -> bool {
        tree::is_known_root(&env, &root)
    }

    /// Where an order stands on this contract.
    pub fn order_state(env: Env, order_hash: BytesN<32>) -> OrderState {
        env.storage().persistent().get(&Key::Order(order_hash)).unwrap_or(OrderState::None)
    }

    /// The order hash this contract computes (the same 32 bytes on every chain).
    pub fn order_hash_of(env: Env, order: Order) -> Result<BytesN<32>, Error> {
        order_hash(&env, &requests::config(&env).order_domain, &order)
    }

    /// True when the nullifier was spent here.
    pub fn nullifier_spent(env: Env, nullifier_hash: U256) -> bool {
        is_spent(&env, &nullifier_hash)
    }

    /// The Groth16 verification key this contract checks proofs against (768 bytes, host-encoded:
    /// alpha ‖ beta ‖ gamma ‖ delta ‖ IC), read by the service at start-up.
    pub fn verification_key(env: Env) -> Bytes {
        relayer_soroban_shared::groth16::committed_key_bytes(&env)
    }

    /// Rotates the relayer key (the admin's authorisation required): `next` signs from now on, the
    /// replaced key stays accepted for `grace_seconds` (docs/security.md "Rotating keys").
    pub fn rotate_relayer(env: Env, next: BytesN<32>, grace_seconds: u64) {
        let previous = requests::rotate_relayer(&env, next.clone(), grace_seconds);
        RelayerRotated { previous: previous.key, current: next, previousUntil: previous.until }.publish(&env);
    }

    /// Moves the end of the previous key's grace period (admin only; ledger seconds): now ends it.
    pub fn set_previous_relayer_until(env: Env, until: u64) {
        if let Some(previous) = requests::set_previous_relayer_until(&env, until) {
            PreviousRelayerGraceSet { previous: previous.key, previousUntil: previous.until }.publish(&env);
        }
    }

    /// The current relayer key.
    pub fn relayer(env: Env) -> BytesN<32> {
        requests::config(&env).relayer
    }

    /// The key the last rotation replaced and the end of its grace period (None before any rotation).
    pub fn previous_relayer(env: Env) -> Option<PreviousRelayer> {
        requests::previous_relayer(&env)
    }

    /// Who may rotate the relayer key.
    pub fn admin(env: Env) -> Address {
        requests::admin(&env)
    }
}
