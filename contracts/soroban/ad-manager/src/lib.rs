//! Reference AdManager for Soroban (ad chain), mirroring contracts/evm/src/AdManager.sol:
//! Makers' liquidity pools. Every call carries a request the relayer signed (ed25519 over the
//! Stellar layout of chains/README.md); orders are locked against an ad and released to the
//! Bridger with the trade's Groth16 proof against the order chain's root, which the relayer's
//! unlock signature attests, before the order's lock_expiry; from lock_expiry on, a lock never
//! unlocked goes back to the Maker's ad (release_lock), and then it can no longer be unlocked.
#![no_std]

use relayer_soroban_shared::{
    events::{AdClosed, AdCreated, AdFunded, AdWithdrawn, LockReleased, OrderLocked, OrderUnlocked, PreviousRelayerGraceSet, RelayerRotated},
    order::{order_hash, Order},
    requests::{self, consume, consume_unlock, types, PreviousRelayer, Request, Unlock},
    settle::{is_spent, spend_with_proof},
    times,
    tokens::{pull, push},
    words::{address_word, amount_word, word_address, WordSink},
    Error,
};
use soroban_sdk::{contract, contractimpl, contracttype, Address, Bytes, BytesN, Env, String, U256};

/// One Maker's pool.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Ad {
    pub creator: Address,
    pub token: Address,
    pub order_chain_id: U256,
    pub ad_recipient: BytesN<32>,
    pub available: i128,
    pub locked: i128,
    pub closed: bool,
}

/// Where an order is on this chain.
#[contracttype]
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
pub enum OrderState {
    None = 0,
    Locked = 1,
    Unlocked = 2,
    Released = 3,
}

#[contracttype]
enum Key {
    Ad(BytesN<32>),
    Order(BytesN<32>),
}

#[contract]
pub struct AdManager;

fn ad_of(env: &Env, ad_id: &BytesN<32>) -> Option<Ad> {
    env.storage().persistent().get(&Key::Ad(ad_id.clone()))
}

fn save_ad(env: &Env, ad_id: &BytesN<32>, ad: &Ad) {
    env.storage().persistent().set(&Key::Ad(ad_id.clone()), ad);
}

/// The ad, open, and its creator's authorisation of this call (EVM: msg.sender is the creator).
fn own_ad(env: &Env, ad_id: &BytesN<32>) -> Result<Ad, Error> {
    let ad = ad_of(env, ad_id).ok_or(Error::UnknownAd)?;
    ad.creator.require_auth();
    if ad.closed {
        return Err(Error::AdIsClosed);
    }
    Ok(ad)
}

fn fields(env: &Env) -> Bytes {
    Bytes::new(env)
}

#[contractimpl]
impl AdManager {
    /// Trusts `relayer` (ed25519 key; `admin` may rotate it) for requests signed for `chain_id` under the domain
    /// {`name`, `version`} (EIP712_DOMAIN_NAME / EIP712_DOMAIN_VERSION).
    pub fn __constructor(env: Env, relayer: BytesN<32>, chain_id: U256, name: String, version: String, admin: Address) {
        requests::init(&env, relayer, chain_id, name, version, admin);
    }

    /// Opens an ad funded with `initial_amount` of `ad_token` from `ad_creator`, who must
    /// authorise the call and is the `adCreator` the relayer signed.
    #[allow(clippy::too_many_arguments)]
    pub fn create_ad(
        env: Env,
        ad_creator: Address,
        ad_id: BytesN<32>,
        ad_token: Address,
        initial_amount: i128,
        order_chain_id: U256,
        ad_recipient: BytesN<32>,
        auth_token: BytesN<32>,
        deadline: u64,
        signer: BytesN<32>,
        signature: BytesN<64>,
    ) -> Result<(), Error> {
        ad_creator.require_auth();
        let mut f = fields(&env);
        f.push_bytesn(&ad_id);
        f.push_bytesn(&address_word(&ad_creator));
        f.push_bytesn(&address_word(&ad_token));
        f.push_array(&amount_word(initial_amount)?);
        f.push_u256(&order_chain_id);
        f.push_bytesn(&ad_recipient);
        let req_hash = consume(
            &env,
            &Request { type_string: types::CREATE_AD, auth_token: &auth_token, deadline, fields: f },
            &signer,
            &signature,
        )?;
        if ad_of(&env, &ad_id).is_some() {
            return Err(Error::AdExists);
        }
        let ad = Ad {
            creator: ad_creator.clone(),
            token: ad_token.clone(),
            order_chain_id: order_chain_id.clone(),
            ad_recipient: ad_recipient.clone(),
            available: initial_amount,
            locked: 0,
            closed: false,
        };
        save_ad(&env, &ad_id, &ad);
        pull(&env, &ad_token, &ad_creator, initial_amount);
        AdCreated {
            reqHash: req_hash,
            adId: ad_id,
            creator: ad_creator,
            token: ad_token,
            amount: initial_amount,
            orderChainId: order_chain_id,
            adRecipient: ad_recipient,
        }
        .publish(&env);
        Ok(())
    }

    /// Adds `amount` to the ad's pool from its creator.
    pub fn fund_ad(
        env: Env,
        ad_id: BytesN<32>,
        amount: i128,
        auth_token: BytesN<32>,
        deadline: u64,
        signer: BytesN<32>,
        signature: BytesN<64>,
    ) -> Result<(), Error> {
        let mut f = fields(&env);
        f.push_bytesn(&ad_id);
        f.push_array(&amount_word(amount)?);
        let req_hash = consume(&env, &Request { type_string: types::FUND_AD, auth_token: &auth_token, deadline, fields: f }, &signer, &signature)?;
        let mut ad = own_ad(&env, &ad_id)?;
        ad.available += amount;
        save_ad(&env, &ad_id, &ad);
        pull(&env, &ad.token, &ad.creator, amount);
        AdFunded { reqHash: req_hash, adId: ad_id, amount, available: ad.available }.publish(&env);
        Ok(())
    }

    /// Sends `amount` of the available (never the locked) balance to `to`.
    pub fn withdraw_from_ad(
        env: Env,
        ad_id: BytesN<32>,
        amount: i128,
        to: Address,
        auth_token: BytesN<32>,
        deadline: u64,
        signer: BytesN<32>,
        signature: BytesN<64>,
    ) -> Result<(), Error> {
        let mut f = fields(&env);
        f.push_bytesn(&ad_id);
        f.push_array(&amount_word(amount)?);
        f.push_bytesn(&address_word(&to));
        let req_hash =
            consume(&env, &Request { type_string: types::WITHDRAW_FROM_AD, auth_token: &auth_token, deadline, fields: f }, &signer, &signature)?;
        let mut ad = own_ad(&env, &ad_id)?;
        if amount > ad.available {
            return Err(Error::InsufficientLiquidity);
        }
        ad.available -= amount;
        save_ad(&env, &ad_id, &ad);
        push(&env, &ad.token, &to, amount);
        AdWithdrawn { reqHash: req_hash, adId: ad_id, amount, to }.publish(&env);
        Ok(())
    }

    /// Closes the ad and sends its available balance to `to`.
    pub fn close_ad(
        env: Env,
        ad_id: BytesN<32>,
        to: Address,
        auth_token: BytesN<32>,
        deadline: u64,
        signer: BytesN<32>,
        signature: BytesN<64>,
    ) -> Result<(), Error> {
        let mut f = fields(&env);
        f.push_bytesn(&ad_id);
        f.push_bytesn(&address_word(&to));
        let req_hash = consume(&env, &Request { type_string: types::CLOSE_AD, auth_token: &auth_token, deadline, fields: f }, &signer, &signature)?;
        let mut ad = own_ad(&env, &ad_id)?;
        let amount = ad.available;
        ad.available = 0;
        ad.closed = true;
        save_ad(&env, &ad_id, &ad);
        push(&env, &ad.token, &to, amount);
        AdClosed { reqHash: req_hash, adId: ad_id, amount, to }.publish(&env);
        Ok(())
    }

    /// The Maker reserves `order.ad_amount` of the ad's pool for the order the Bridger deposited.
    pub fn lock_for_order(
        env: Env,
        order: Order,
        auth_token: BytesN<32>,
        deadline: u64,
        signer: BytesN<32>,
        signature: BytesN<64>,
    ) -> Result<(), Error> {
        let config = requests::config(&env);
        let hash = order_hash(&env, &config.order_domain, &order)?;
        let mut f = fields(&env);
        f.push_bytesn(&hash);
        let req_hash =
            consume(&env, &Request { type_string: types::LOCK_FOR_ORDER, auth_token: &auth_token, deadline, fields: f }, &signer, &signature)?;
        if order.ad_chain_id != config.chain_id || order.ad_manager != address_word(&env.current_contract_address()) {
            return Err(Error::NotForThisContract);
        }
        let mut ad = own_ad(&env, &order.ad_id)?;
        // The deposit must pay the Maker where the ad said (creatorDstAddress), in the ad's token and chains.
        if order.ad_chain_token != address_word(&ad.token)
            || order.order_chain_id != ad.order_chain_id
            || order.ad_creator != address_word(&ad.creator)
            || order.order_recipient != ad.ad_recipient
        {
            return Err(Error::OrderMismatch);
        }
        times::check_times(&env, &order)?;
        if Self::order_state(env.clone(), hash.clone()) != OrderState::None {
            return Err(Error::WrongOrderState);
        }
        if order.ad_amount > ad.available {
            return Err(Error::InsufficientLiquidity);
        }
        ad.available -= order.ad_amount;
        ad.locked += order.ad_amount;
        save_ad(&env, &order.ad_id, &ad);
        env.storage().persistent().set(&Key::Order(hash.clone()), &OrderState::Locked);
        OrderLocked { reqHash: req_hash, orderHash: hash, adId: order.ad_id, amount: order.ad_amount }.publish(&env);
        Ok(())
    }

    /// Releases a locked order to its ad-chain recipient (the Bridger), whoever submits it.
    /// `target_root` is the order chain's: this chain cannot read it, the relayer's signature
    /// over it vouches for it.
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
        if Self::order_state(env.clone(), hash.clone()) != OrderState::Locked {
            return Err(Error::WrongOrderState);
        }
        times::before(&env, order.lock_expiry)?;
        spend_with_proof(&env, &hash, &target_root, &nullifier_hash, &proof)?;
        env.storage().persistent().set(&Key::Order(hash.clone()), &OrderState::Unlocked);
        let mut ad = ad_of(&env, &order.ad_id).ok_or(Error::UnknownAd)?;
        ad.locked -= order.ad_amount;
        save_ad(&env, &order.ad_id, &ad);
        let recipient = word_address(&env, &order.ad_recipient);
        push(&env, &ad.token, &recipient, order.ad_amount);
        OrderUnlocked { reqHash: req_hash, orderHash: hash, nullifierHash: nullifier_hash, recipient, amount: order.ad_amount }
            .publish(&env);
        Ok(())
    }

    /// From the order's lock_expiry on, returns a lock the Bridger never unlocked to the ad's
    /// available balance (to the Maker directly when the ad is closed). Needs no relayer signature
    /// and no authorisation: anyone may submit it.
    pub fn release_lock(env: Env, order: Order) -> Result<(), Error> {
        let hash = order_hash(&env, &requests::config(&env).order_domain, &order)?;
        if Self::order_state(env.clone(), hash.clone()) != OrderState::Locked {
            return Err(Error::WrongOrderState);
        }
        times::from(&env, order.lock_expiry)?;
        env.storage().persistent().set(&Key::Order(hash.clone()), &OrderState::Released);
        let mut ad = ad_of(&env, &order.ad_id).ok_or(Error::UnknownAd)?;
        ad.locked -= order.ad_amount;
        if ad.closed {
            push(&env, &ad.token, &ad.creator, order.ad_amount);
        } else {
            ad.available += order.ad_amount;
        }
        save_ad(&env, &order.ad_id, &ad);
        LockReleased { orderHash: hash, adId: order.ad_id, amount: order.ad_amount }.publish(&env);
        Ok(())
    }

    /// The ad, if it exists.
    pub fn ad(env: Env, ad_id: BytesN<32>) -> Option<Ad> {
        ad_of(&env, &ad_id)
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
