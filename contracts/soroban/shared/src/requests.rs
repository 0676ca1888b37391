//! Relayer-signed requests: the Stellar byte layout of chains/stellar/request-layout.ts, checked
//! with the host's sha256 and ed25519_verify, plus the deadline and the single-use authToken.
use soroban_sdk::{contracttype, Address, Bytes, BytesN, Env, String, U256};

use crate::words::{u64_word, WordSink};
use crate::Error;

/// Type strings of the signed structs, exactly as chains/request-schema.ts builds them.
pub mod types {
    pub const CREATE_AD: &str = "CreateAd(bytes32 authToken,uint256 deadline,bytes32 adId,bytes32 adCreator,bytes32 adToken,uint256 initialAmount,uint256 orderChainId,bytes32 adRecipient)";
    pub const FUND_AD: &str = "FundAd(bytes32 authToken,uint256 deadline,bytes32 adId,uint256 amount)";
    pub const WITHDRAW_FROM_AD: &str = "WithdrawFromAd(bytes32 authToken,uint256 deadline,bytes32 adId,uint256 amount,bytes32 to)";
    pub const CLOSE_AD: &str = "CloseAd(bytes32 authToken,uint256 deadline,bytes32 adId,bytes32 to)";
    pub const CREATE_ORDER: &str = "CreateOrder(bytes32 authToken,uint256 deadline,bytes32 orderHash,uint256 secretCommitment)";
    pub const LOCK_FOR_ORDER: &str = "LockForOrder(bytes32 authToken,uint256 deadline,bytes32 orderHash)";
    pub const UNLOCK: &str = "Unlock(bytes32 authToken,uint256 deadline,bytes32 orderHash,uint256 nullifierHash,uint256 targetRoot)";
}

/// What a contract is set up with, kept in instance storage.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Config {
    /// The relayer's current ed25519 public key (the 32 bytes of its G... strkey).
    pub relayer: BytesN<32>,
    /// The registry's chain id of this network (Stellar has none of its own; the demo uses 148).
    pub chain_id: U256,
    /// sha256 of the domain name and version (Stellar request layout).
    pub name_sha256: BytesN<32>,
    pub version_sha256: BytesN<32>,
    /// keccak256 EIP-712 separator of the order domain {name, version} (order hash).
    pub order_domain: BytesN<32>,
}

/// The relayer key a rotation replaced, accepted while the ledger time is before `until`.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct PreviousRelayer {
    pub key: BytesN<32>,
    /// Ledger seconds: end (exclusive) of the grace period.
    pub until: u64,
}

#[contracttype]
#[derive(Clone)]
enum RequestKey {
    Config,
    AuthToken(BytesN<32>),
    /// Who may rotate the relayer key and set the grace period.
    Admin,
    Previous,
}

/// Stores the configuration; `name`/`version` are the EIP-712 domain's (EIP712_DOMAIN_NAME/VERSION);
/// `admin` alone may rotate the relayer key later (`rotate_relayer`, `set_previous_relayer_until`).
pub fn init(env: &Env, relayer: BytesN<32>, chain_id: U256, name: String, version: String, admin: Address) {
    env.storage().instance().set(&RequestKey::Admin, &admin);
    let name = string_bytes(env, &name);
    let version = string_bytes(env, &version);
    let config = Config {
        relayer,
        chain_id,
        name_sha256: env.crypto().sha256(&name).into(),
        version_sha256: env.crypto().sha256(&version).into(),
        order_domain: crate::order::order_domain(env, &name, &version),
    };
    env.storage().instance().set(&RequestKey::Config, &config);
}

/// The stored configuration.
pub fn config(env: &Env) -> Config {
    env.storage().instance().get(&RequestKey::Config).expect("not initialised")
}

/// The admin set at construction.
pub fn admin(env: &Env) -> Address {
    env.storage().instance().get(&RequestKey::Admin).expect("not initialised")
}

/// The key the last rotation replaced and the end of its grace period, if a rotation happened.
pub fn previous_relayer(env: &Env) -> Option<PreviousRelayer> {
    env.storage().instance().get(&RequestKey::Previous)
}

/// Key rotation without downtime (the admin's authorisation required): `next` becomes the relayer
/// and the key it replaces stays accepted for `grace_seconds` from the ledger's now, so requests the
/// service signed with it before switching still execute until their deadline. As RelayerRequests.sol.
pub fn rotate_relayer(env: &Env, next: BytesN<32>, grace_seconds: u64) -> PreviousRelayer {
    admin(env).require_auth();
    let mut config = config(env);
    let previous = PreviousRelayer { key: config.relayer.clone(), until: env.ledger().timestamp().saturating_add(grace_seconds) };
    config.relayer = next;
    env.storage().instance().set(&RequestKey::Config, &config);
    env.storage().instance().set(&RequestKey::Previous, &previous);
    previous
}

/// Moves the end of the previous key's grace period (admin only): now or earlier ends it (a leaked
/// old key), later extends it. Before any rotation there is no previous key: nothing is stored and
/// None is returned.
pub fn set_previous_relayer_until(env: &Env, until: u64) -> Option<PreviousRelayer> {
    admin(env).require_auth();
    let mut previous = previous_relayer(env)?;
    previous.until = until;
    env.storage().instance().set(&RequestKey::Previous, &previous);
    Some(previous)
}

/// Whether `signer` may authorise a request now: the current relayer key, or the previous one
/// before the end of its grace period.
pub fn is_relayer_signer(env: &Env, config: &Config, signer: &BytesN<32>) -> bool {
    if *signer == config.relayer {
        return true;
    }
    match previous_relayer(env) {
        Some(previous) => previous.key == *signer && env.ledger().timestamp() < previous.until,
        None => false,
    }
}

fn string_bytes(env: &Env, s: &String) -> Bytes {
    let mut buf = [0u8; 64];
    let len = s.len() as usize;
    assert!(len <= buf.len(), "domain string too long");
    s.copy_into_slice(&mut buf[..len]);
    Bytes::from_slice(env, &buf[..len])
}

/// A request being checked: the struct's type string and its words after authToken and deadline.
pub struct Request<'a> {
    pub type_string: &'a str,
    pub auth_token: &'a BytesN<32>,
    pub deadline: u64,
    /// The action's own fields, each one 32-byte word, in signing order.
    pub fields: Bytes,
}

/// The request hash: sha256 of
/// `sha256(name) ‖ sha256(version) ‖ network id ‖ chainId ‖ contract id ‖ sha256(type string) ‖ authToken ‖ deadline ‖ fields`.
/// The network id slot is the ledger's (sha256 of the passphrase), so a request signed for another
/// network, chain id or contract hashes differently here.
pub fn request_hash(env: &Env, config: &Config, request: &Request) -> BytesN<32> {
    let mut message = Bytes::new(env);
    message.push_bytesn(&config.name_sha256);
    message.push_bytesn(&config.version_sha256);
    message.push_bytesn(&env.ledger().network_id());
    message.push_u256(&config.chain_id);
    message.push_bytesn(&crate::words::address_word(&env.current_contract_address()));
    message.push_bytesn(&env.crypto().sha256(&Bytes::from_slice(env, request.type_string.as_bytes())).into());
    message.push_bytesn(request.auth_token);
    message.push_array(&u64_word(request.deadline));
    message.append(&request.fields);
    env.crypto().sha256(&message).into()
}

/// Checks the deadline, the signer (the current relayer key, or the previous one within its grace
/// period: `InvalidSignature` otherwise), the signature and the single use of the authToken, in that
/// order (as RelayerRequests.sol), marks the token used and returns the request hash (reqHash).
/// The signer is named by the call (the API's `signerPublicKey`): the host's `ed25519_verify` traps
/// on a bad signature, so the contract cannot try one key and then the other.
pub fn consume(env: &Env, request: &Request, signer: &BytesN<32>, signature: &BytesN<64>) -> Result<BytesN<32>, Error> {
    if env.ledger().timestamp() > request.deadline {
        return Err(Error::RequestExpired);
    }
    let config = config(env);
    if !is_relayer_signer(env, &config, signer) {
        return Err(Error::InvalidSignature);
    }
    let req_hash = request_hash(env, &config, request);
    env.crypto().ed25519_verify(signer, &Bytes::from(req_hash.clone()), signature);
    let key = RequestKey::AuthToken(request.auth_token.clone());
    if env.storage().persistent().has(&key) {
        return Err(Error::AuthTokenUsed);
    }
    env.storage().persistent().set(&key, &true);
    Ok(req_hash)
}

/// The hashes an unlock request answers with: the order's and the request's (reqHash).
pub struct Unlock {
    pub order_hash: BytesN<32>,
    pub req_hash: BytesN<32>,
}

/// `consume` for `Unlock` (both contracts' unlock): hashes the order under this contract's order
/// domain and checks the relayer's request over it, the nullifier and the order chain's root.
pub fn consume_unlock(
    env: &Env,
    order: &crate::order::Order,
    nullifier_hash: &U256,
    target_root: &U256,
    auth_token: &BytesN<32>,
    deadline: u64,
    signer: &BytesN<32>,
    signature: &BytesN<64>,
) -> Result<Unlock, Error> {
    let order_hash = crate::order::order_hash(env, &config(env).order_domain, order)?;
    let mut fields = Bytes::new(env);
    fields.push_bytesn(&order_hash);
    fields.push_u256(nullifier_hash);
    fields.push_u256(target_root);
    let req_hash = consume(env, &Request { type_string: types::UNLOCK, auth_token, deadline, fields }, signer, signature)?;
    Ok(Unlock { order_hash, req_hash })
}
