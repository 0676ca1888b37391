//! Shared set-up: the ledger the vectors were signed for, the Stellar Asset Contract of the
//! vectors' asset (fixed issuer, so its id is the one TypeScript computed), funded accounts with
//! trustlines, and both contracts registered at the vectors' ids.
use relayer_soroban_ad_manager::{AdManager, AdManagerClient};
use relayer_soroban_order_portal::{OrderPortal, OrderPortalClient};
use relayer_soroban_shared::Order;
use serde_json::Value;
use soroban_sdk::{
    address_payload::AddressPayload,
    testutils::Ledger,
    token::{StellarAssetClient, TokenClient},
    xdr, Address, Bytes, BytesN, Env, String, TryFromVal, U256,
};
use std::rc::Rc;

/// The committed vectors (compiled in, so cargo rebuilds when they change).
pub fn vectors() -> Value {
    serde_json::from_str(include_str!("../../vectors.json")).expect("vectors.json parses")
}

/// `0x`-prefixed hex as bytes.
pub fn hex_bytes(s: &str) -> Vec<u8> {
    hex::decode(s.trim_start_matches("0x")).expect("hex")
}

/// A decimal or 0x-hex string as a 32-byte big-endian word.
pub fn word(s: &str) -> [u8; 32] {
    let mut out = [0u8; 32];
    if let Some(hex) = s.strip_prefix("0x") {
        let bytes = hex::decode(hex).expect("hex");
        out[32 - bytes.len()..].copy_from_slice(&bytes);
        return out;
    }
    for digit in s.bytes() {
        assert!(digit.is_ascii_digit(), "not a decimal: {s}");
        let mut carry = (digit - b'0') as u32;
        for byte in out.iter_mut().rev() {
            let v = (*byte as u32) * 10 + carry;
            *byte = v as u8;
            carry = v >> 8;
        }
        assert_eq!(carry, 0, "does not fit 256 bits: {s}");
    }
    out
}

pub fn u256(env: &Env, s: &str) -> U256 {
    U256::from_be_bytes(env, &Bytes::from_array(env, &word(s)))
}

pub fn bytes32(env: &Env, s: &str) -> BytesN<32> {
    BytesN::from_array(env, &word(s))
}

pub fn bytes64(env: &Env, s: &str) -> BytesN<64> {
    BytesN::from_array(env, &hex_bytes(s).try_into().expect("64 bytes"))
}

pub fn bytes(env: &Env, s: &str) -> Bytes {
    Bytes::from_slice(env, &hex_bytes(s))
}

/// A UUID as its 32-byte word (16 zero bytes, then the UUID's bytes).
pub fn uuid_word(env: &Env, uuid: &str) -> BytesN<32> {
    bytes32(env, &format!("0x{}", uuid.replace('-', "")))
}

pub fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_else(|| panic!("vector field {key} missing in {v}"))
}

pub fn amount(v: &Value, key: &str) -> i128 {
    text(v, key).parse().expect("i128 amount")
}

pub fn address(env: &Env, strkey: &str) -> Address {
    Address::from_str(env, strkey)
}

/// The header every signed call carries.
pub struct Signed {
    pub auth_token: BytesN<32>,
    pub deadline: u64,
    /// The key the request names as its signer (the API's `signerPublicKey`).
    pub signer: BytesN<32>,
    pub signature: BytesN<64>,
    pub req_hash: BytesN<32>,
}

pub fn signed(env: &Env, call: &Value) -> Signed {
    Signed {
        auth_token: bytes32(env, text(call, "authToken")),
        deadline: text(call, "deadline").parse().expect("deadline"),
        signer: account_key(env, text(call, "signerPublicKey")),
        signature: bytes64(env, text(call, "signature")),
        req_hash: bytes32(env, text(call, "reqHash")),
    }
}

/// The Order struct from a vector's `words`.
pub fn order(env: &Env, o: &Value) -> Order {
    let w = &o["words"];
    let b = |k: &str| bytes32(env, text(w, k));
    let n = |k: &str| u256(env, text(w, k));
    Order {
        order_chain_token: b("orderChainToken"),
        ad_chain_token: b("adChainToken"),
        order_amount: amount(w, "orderAmount"),
        ad_amount: amount(w, "adAmount"),
        bridger: b("bridger"),
        order_recipient: b("orderRecipient"),
        ad_id: b("adId"),
        ad_creator: b("adCreator"),
        ad_recipient: b("adRecipient"),
        salt: n("salt"),
        order_chain_id: n("orderChainId"),
        order_portal: b("orderPortal"),
        ad_chain_id: n("adChainId"),
        ad_manager: b("adManager"),
        lock_expiry: text(w, "lockExpiry").parse().expect("lockExpiry"),
        refund_time: text(w, "refundTime").parse().expect("refundTime"),
    }
}

/// The 32-byte ed25519 key of a G... account.
pub fn account_key(env: &Env, strkey: &str) -> BytesN<32> {
    match address(env, strkey).to_payload() {
        Some(AddressPayload::AccountIdPublicKeyEd25519(key)) => key,
        _ => panic!("{strkey} is not an account"),
    }
}

fn account_id(env: &Env, strkey: &str) -> xdr::AccountId {
    match address(env, strkey).to_payload() {
        Some(AddressPayload::AccountIdPublicKeyEd25519(key)) => {
            xdr::AccountId(xdr::PublicKey::PublicKeyTypeEd25519(xdr::Uint256(key.to_array())))
        }
        _ => panic!("{strkey} is not an account"),
    }
}

fn add_entry(env: &Env, key: xdr::LedgerKey, data: xdr::LedgerEntryData) {
    let entry = xdr::LedgerEntry { last_modified_ledger_seq: 0, data, ext: xdr::LedgerEntryExt::V0 };
    env.host().add_ledger_entry(&Rc::new(key), &Rc::new(entry), None).expect("ledger entry added");
}

fn add_account(env: &Env, id: &xdr::AccountId) {
    add_entry(
        env,
        xdr::LedgerKey::Account(xdr::LedgerKeyAccount { account_id: id.clone() }),
        xdr::LedgerEntryData::Account(xdr::AccountEntry {
            account_id: id.clone(),
            balance: 100_0000000,
            flags: 0,
            home_domain: Default::default(),
            inflation_dest: None,
            num_sub_entries: 1,
            seq_num: xdr::SequenceNumber(0),
            thresholds: xdr::Thresholds([1; 4]),
            signers: Default::default(),
            ext: xdr::AccountEntryExt::V0,
        }),
    );
}

/// Both contracts and the token, as the vectors describe them.
pub struct World {
    pub env: Env,
    pub v: Value,
    pub token: Address,
    pub maker: Address,
    pub bridger: Address,
    /// Who may rotate the relayer key.
    pub admin: Address,
    pub ad_manager: AdManagerClient<'static>,
    pub order_portal: OrderPortalClient<'static>,
}

impl World {
    pub fn token(&self) -> TokenClient<'_> {
        TokenClient::new(&self.env, &self.token)
    }

    pub fn balance(&self, who: &Address) -> i128 {
        self.token().balance(who)
    }

    /// Moves the ledger clock (the vectors are signed for `network.ledgerTimestamp`).
    pub fn set_time(&self, timestamp: u64) {
        self.env.ledger().set_timestamp(timestamp);
    }
}

/// A fresh host: ledger at the vectors' time on the vectors' network, the TUSD asset contract,
/// Maker and Bridger accounts with trustlines and 10 000 000 TUSD each, both contracts registered.
pub fn world() -> World {
    let v = vectors();
    let env = Env::default();
    env.mock_all_auths();
    env.ledger().with_mut(|li| {
        li.protocol_version = 25;
        li.timestamp = v["network"]["ledgerTimestamp"].as_u64().unwrap();
        li.network_id = word(text(&v["network"], "networkId"));
    });
    // No budget limit while testing behaviour; cost.rs measures what one call costs.
    env.cost_estimate().budget().reset_unlimited();

    let asset_v = &v["contracts"]["tokenAsset"];
    let issuer = account_id(&env, text(asset_v, "issuer"));
    add_account(&env, &issuer);
    let code: [u8; 4] = text(asset_v, "code").as_bytes().try_into().expect("4-letter code");
    let alpha = xdr::AlphaNum4 { asset_code: xdr::AssetCode4(code), issuer: issuer.clone() };
    let created = env
        .host()
        .invoke_function(xdr::HostFunction::CreateContract(xdr::CreateContractArgs {
            contract_id_preimage: xdr::ContractIdPreimage::Asset(xdr::Asset::CreditAlphanum4(alpha.clone())),
            executable: xdr::ContractExecutable::StellarAsset,
        }))
        .expect("asset contract created");
    let token = Address::try_from_val(&env, &created).expect("address");
    assert_eq!(token, address(&env, text(&v["contracts"], "token")), "TypeScript's asset contract id equals the host's");

    let mut holders = vec![];
    for name in ["maker", "bridger"] {
        let strkey = text(&v["accounts"], name);
        let id = account_id(&env, strkey);
        add_account(&env, &id);
        add_entry(
            &env,
            xdr::LedgerKey::Trustline(xdr::LedgerKeyTrustLine {
                account_id: id.clone(),
                asset: xdr::TrustLineAsset::CreditAlphanum4(alpha.clone()),
            }),
            xdr::LedgerEntryData::Trustline(xdr::TrustLineEntry {
                account_id: id.clone(),
                asset: xdr::TrustLineAsset::CreditAlphanum4(alpha.clone()),
                balance: 0,
                limit: i64::MAX,
                flags: xdr::TrustLineFlags::AuthorizedFlag as u32,
                ext: xdr::TrustLineEntryExt::V0,
            }),
        );
        let holder = address(&env, strkey);
        StellarAssetClient::new(&env, &token).mint(&holder, &10_000_000);
        holders.push(holder);
    }

    let relayer = bytes32(&env, text(&v["relayer"], "key"));
    let chain_id = u256(&env, text(&v["network"], "chainId"));
    let name = String::from_str(&env, text(&v["network"]["domain"], "name"));
    let version = String::from_str(&env, text(&v["network"]["domain"], "version"));
    // The contracts' admin (may rotate the relayer key): an address of its own.
    let admin = <Address as soroban_sdk::testutils::Address>::generate(&env);
    let args = (relayer, chain_id, name, version, admin.clone());
    let ad_manager_id = address(&env, text(&v["contracts"], "adManager"));
    env.register_at(&ad_manager_id, AdManager, args.clone());
    let order_portal_id = address(&env, text(&v["contracts"], "orderPortal"));
    env.register_at(&order_portal_id, OrderPortal, args);

    // The clients borrow the env for their lifetime; the env lives as long as the World.
    let leaked: &'static Env = Box::leak(Box::new(env.clone()));
    World {
        ad_manager: AdManagerClient::new(leaked, &ad_manager_id),
        order_portal: OrderPortalClient::new(leaked, &order_portal_id),
        maker: holders[0].clone(),
        bridger: holders[1].clone(),
        admin,
        env,
        v,
        token,
    }
}

/// The bridge events `contract` emitted in the last invocation, as the host serialises them.
pub fn events_of(w: &World, contract: &Address) -> Vec<xdr::ContractEvent> {
    use soroban_sdk::testutils::Events;
    w.env.events().all().filter_by_contract(contract).events().to_vec()
}

/// The event's name (topic 0) and the 32-byte topics 1 and 2.
pub fn topics(event: &xdr::ContractEvent) -> (std::string::String, [u8; 32], [u8; 32]) {
    let xdr::ContractEventBody::V0(body) = &event.body;
    let name = match &body.topics[0] {
        xdr::ScVal::Symbol(s) => s.to_utf8_string().unwrap(),
        other => panic!("topic 0 is not a symbol: {other:?}"),
    };
    let b = |i: usize| match &body.topics[i] {
        xdr::ScVal::Bytes(b) => <[u8; 32]>::try_from(b.as_slice()).expect("32 bytes"),
        other => panic!("topic {i} is not bytes: {other:?}"),
    };
    (name, b(1), b(2))
}

/// A data field of the event's map, by key.
pub fn data_field(event: &xdr::ContractEvent, key: &str) -> xdr::ScVal {
    let xdr::ContractEventBody::V0(body) = &event.body;
    let xdr::ScVal::Map(Some(map)) = &body.data else { panic!("event data is not a map") };
    map.iter()
        .find(|e| matches!(&e.key, xdr::ScVal::Symbol(s) if s.to_utf8_string().unwrap() == key))
        .unwrap_or_else(|| panic!("event has no {key}"))
        .val
        .clone()
}

/// A U256 ScVal as 32 big-endian bytes.
pub fn scval_u256(v: &xdr::ScVal) -> [u8; 32] {
    let xdr::ScVal::U256(p) = v else { panic!("not a U256: {v:?}") };
    let mut out = [0u8; 32];
    out[..8].copy_from_slice(&p.hi_hi.to_be_bytes());
    out[8..16].copy_from_slice(&p.hi_lo.to_be_bytes());
    out[16..24].copy_from_slice(&p.lo_hi.to_be_bytes());
    out[24..].copy_from_slice(&p.lo_lo.to_be_bytes());
    out
}

/// Asserts the last invocation emitted exactly one event from `contract`, named `name`, carrying
/// the request hash the TypeScript side computed and the expected key (adId or orderHash).
pub fn expect_event(w: &World, contract: &Address, name: &str, req_hash: &BytesN<32>, key: &BytesN<32>) -> xdr::ContractEvent {
    let events = events_of(w, contract);
    assert_eq!(events.len(), 1, "one event from the contract");
    let (n, r, k) = topics(&events[0]);
    assert_eq!(n, name);
    assert_eq!(r, req_hash.to_array(), "reqHash topic equals the relayer's reqHash");
    assert_eq!(k, key.to_array());
    events[0].clone()
}
