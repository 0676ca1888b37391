//! Checking and applying transactions: signatures over the network passphrase, sequence numbers,
//! fees charged from the source account, the classic operations the flows need (create account,
//! native payment) and Soroban invocations executed by the real host (`e2e_invoke`), which
//! enforces the footprint, the budget and Soroban authorization.

use crate::config::{self, BASE_FEE, BASE_RESERVE, PROTOCOL_VERSION};
use crate::state::{sha256, to_b64, to_xdr, EventRecord, Ledger, TxEvents, TxRecord};
use ed25519_dalek::{Signature, VerifyingKey};
use soroban_env_host::budget::Budget;
use soroban_env_host::e2e_invoke::{extract_rent_changes, invoke_host_function};
use soroban_env_host::fees::{compute_rent_fee, compute_transaction_resource_fee, TransactionResources};
use soroban_env_host::xdr::{
    AccountEntry, AccountEntryExt, AccountId, Asset, ContractEvent, ContractEventBody, CreateAccountOp,
    CreateAccountResult, DiagnosticEvent, ExtensionPoint, Hash, InvokeHostFunctionOp, InvokeHostFunctionResult,
    LedgerEntry, LedgerEntryChange, LedgerEntryChanges, LedgerEntryData, LedgerEntryExt, LedgerKey, LedgerKeyAccount,
    Limits, MuxedAccount, Operation, OperationBody, OperationMetaV2, OperationResult, OperationResultTr, PaymentOp,
    PaymentResult, Preconditions, PublicKey, ReadXdr, ScVal, SequenceNumber, SorobanTransactionData,
    SorobanTransactionDataExt, SorobanTransactionMetaExt, SorobanTransactionMetaV2, Thresholds, Transaction,
    TransactionEnvelope, TransactionExt, TransactionMeta, TransactionMetaV4, TransactionResult, TransactionResultExt,
    TransactionResultResult, TtlEntry, Uint256,
};
use soroban_env_host::budget::AsBudget;
use soroban_env_host::vm::VersionedContractCodeCostInputs;
use soroban_env_host::xdr::{ContractCodeEntry, ContractCodeEntryExt};
use soroban_env_host::{CompilationContext, ErrorHandler, HostError, LedgerInfo, ModuleCache};
use soroban_simulation::NetworkConfig;
use std::collections::BTreeMap;

/// Compiles contract modules outside any transaction's budget, as a validator's module cache does.
#[derive(Clone)]
struct Compiler(Budget);

impl ErrorHandler for Compiler {
    fn map_err<T, E>(&self, res: Result<T, E>) -> Result<T, HostError>
    where
        soroban_env_host::Error: From<E>,
        E: std::fmt::Debug,
    {
        res.map_err(|e| HostError::from(soroban_env_host::Error::from(e)))
    }
    fn error(&self, error: soroban_env_host::Error, _msg: &str, _args: &[soroban_env_host::Val]) -> HostError {
        HostError::from(error)
    }
}

impl AsBudget for Compiler {
    fn as_budget(&self) -> &Budget {
        &self.0
    }
}

impl CompilationContext for Compiler {}

/// The parsed wasm of every contract the network ran, kept between transactions like
/// stellar-core's module cache: invocations pay for instantiation, not for parsing again.
pub struct Modules {
    cache: ModuleCache,
    compiler: Compiler,
}

impl Modules {
    pub fn new(network: &NetworkConfig) -> Result<Self, String> {
        let budget = Budget::try_from_configs(u64::MAX / 4, u64::MAX / 4, network.cpu_cost_params.clone(), network.memory_cost_params.clone())
            .map_err(|e| format!("compiler budget: {e:?}"))?;
        let compiler = Compiler(budget);
        let cache = ModuleCache::new(&compiler).map_err(|e| format!("module cache: {e:?}"))?;
        Ok(Modules { cache, compiler })
    }

    /// Parses the contract code entries among `keys` that are not cached yet.
    fn ensure<'a>(&self, ledger: &Ledger, keys: impl Iterator<Item = &'a LedgerKey>) {
        for key in keys {
            if !matches!(key, LedgerKey::ContractCode(_)) {
                continue;
            }
            let Some((LedgerEntry { data: LedgerEntryData::ContractCode(ContractCodeEntry { code, hash, ext }), .. }, _)) = ledger.get(key) else {
                continue;
            };
            let inputs = match ext {
                ContractCodeEntryExt::V0 => VersionedContractCodeCostInputs::V0 { wasm_bytes: code.len() },
                ContractCodeEntryExt::V1(v1) => VersionedContractCodeCostInputs::V1(v1.cost_inputs.clone()),
            };
            if let Err(error) = self.cache.parse_and_cache_module(&self.compiler, PROTOCOL_VERSION, hash, code.as_slice(), inputs) {
                eprintln!("stellar-devnet: cannot compile contract {}: {error:?}", hex::encode(hash.0));
            }
        }
    }
}

/// The account key behind a muxed or plain account.
pub fn account_of(account: &MuxedAccount) -> AccountId {
    match account {
        MuxedAccount::Ed25519(key) => AccountId(PublicKey::PublicKeyTypeEd25519(key.clone())),
        MuxedAccount::MuxedEd25519(muxed) => AccountId(PublicKey::PublicKeyTypeEd25519(muxed.ed25519.clone())),
    }
}

fn key_bytes(account: &AccountId) -> [u8; 32] {
    let AccountId(PublicKey::PublicKeyTypeEd25519(Uint256(bytes))) = account;
    *bytes
}

pub fn account_key(account: &AccountId) -> LedgerKey {
    LedgerKey::Account(LedgerKeyAccount { account_id: account.clone() })
}

pub fn account_entry(ledger: &Ledger, account: &AccountId) -> Option<AccountEntry> {
    match ledger.get(&account_key(account)) {
        Some((LedgerEntry { data: LedgerEntryData::Account(entry), .. }, _)) => Some(entry.clone()),
        _ => None,
    }
}

fn put_account(ledger: &mut Ledger, entry: AccountEntry, seq: u32) {
    ledger.put(LedgerEntry { last_modified_ledger_seq: seq, data: LedgerEntryData::Account(entry), ext: LedgerEntryExt::V0 }, None);
}

/// A fresh account as CreateAccount makes it (sequence number = ledger << 32, master key weight 1).
pub fn new_account(account: AccountId, balance: i64, seq: u32) -> AccountEntry {
    AccountEntry {
        account_id: account,
        balance,
        seq_num: SequenceNumber((seq as i64) << 32),
        num_sub_entries: 0,
        inflation_dest: None,
        flags: 0,
        home_domain: Default::default(),
        thresholds: Thresholds([1, 0, 0, 0]),
        signers: Default::default(),
        ext: AccountEntryExt::V0,
    }
}

/// The v1 transaction inside the envelope (fee bumps and v0 envelopes are not supported).
pub fn transaction_of(envelope: &TransactionEnvelope) -> Option<&Transaction> {
    match envelope {
        TransactionEnvelope::Tx(v1) => Some(&v1.tx),
        _ => None,
    }
}

fn soroban_data(tx: &Transaction) -> Option<&SorobanTransactionData> {
    match &tx.ext {
        TransactionExt::V1(data) => Some(data),
        TransactionExt::V0 => None,
    }
}

/// Whether the envelope carries a valid ed25519 signature of `account`'s master key over the network's transaction hash.
fn signed_by(envelope: &TransactionEnvelope, hash: &[u8; 32], account: &AccountId) -> bool {
    let TransactionEnvelope::Tx(v1) = envelope else { return false };
    let key = key_bytes(account);
    let Ok(verifying) = VerifyingKey::from_bytes(&key) else { return false };
    v1.signatures.iter().any(|decorated| {
        decorated.hint.0 == key[28..32]
            && Signature::from_slice(decorated.signature.0.as_slice())
                .map(|signature| verifying.verify_strict(hash, &signature).is_ok())
                .unwrap_or(false)
    })
}

/// What a Soroban transaction declares and may be charged at most.
fn inclusion_fee(tx: &Transaction) -> i64 {
    BASE_FEE * tx.operations.len() as i64
}

fn declared_resource_fee(tx: &Transaction) -> i64 {
    soroban_data(tx).map(|data| data.resource_fee).unwrap_or(0)
}

fn transaction_resources(data: &SorobanTransactionData, tx_size: u32, events_size: u32) -> TransactionResources {
    let footprint = &data.resources.footprint;
    let classic = |key: &&LedgerKey| !matches!(key, LedgerKey::ContractData(_) | LedgerKey::ContractCode(_));
    let restored = match &data.ext {
        SorobanTransactionDataExt::V1(ext) => ext.archived_soroban_entries.len() as u32,
        SorobanTransactionDataExt::V0 => 0,
    };
    TransactionResources {
        instructions: data.resources.instructions,
        disk_read_entries: footprint.read_only.iter().filter(classic).count() as u32
            + footprint.read_write.iter().filter(classic).count() as u32
            + restored,
        write_entries: footprint.read_write.len() as u32,
        disk_read_bytes: data.resources.disk_read_bytes,
        write_bytes: data.resources.write_bytes,
        contract_events_size_bytes: events_size,
        transaction_size_bytes: tx_size,
    }
}

/// What a transaction is checked against: the network's limits and the close time of the ledger it would be in.
pub struct Checks<'a> {
    pub network: &'a NetworkConfig,
    pub close_time: u64,
}

/// Checks a submitted envelope as stellar-core's admission does; `pending` counts transactions of
/// the same source already queued for the next ledger. Err is the result code to refuse with.
pub fn check(ledger: &Ledger, envelope: &TransactionEnvelope, hash: &[u8; 32], pending: i64, checks: &Checks) -> Result<(), TransactionResultResult> {
    let Some(tx) = transaction_of(envelope) else { return Err(TransactionResultResult::TxNotSupported) };
    if tx.operations.is_empty() {
        return Err(TransactionResultResult::TxMissingOperation);
    }
    let time_bounds = match &tx.cond {
        Preconditions::None => None,
        Preconditions::Time(bounds) => Some(bounds.clone()),
        Preconditions::V2(v2) => v2.time_bounds.clone(),
    };
    if let Some(bounds) = time_bounds {
        if bounds.max_time.0 != 0 && bounds.max_time.0 < checks.close_time {
            return Err(TransactionResultResult::TxTooLate);
        }
        if bounds.min_time.0 > checks.close_time {
            return Err(TransactionResultResult::TxTooEarly);
        }
    }
    let soroban = tx.operations.iter().any(|op| matches!(op.body, OperationBody::InvokeHostFunction(_)));
    if soroban {
        let Some(data) = soroban_data(tx) else { return Err(TransactionResultResult::TxSorobanInvalid) };
        if tx.operations.len() != 1 || data.resources.instructions as i64 > checks.network.tx_max_instructions || data.resource_fee < 0 {
            return Err(TransactionResultResult::TxSorobanInvalid);
        }
        let size = to_xdr(envelope).len() as u32;
        let (non_refundable, _) = compute_transaction_resource_fee(&transaction_resources(data, size, 0), &checks.network.fee_configuration);
        if data.resource_fee < non_refundable {
            return Err(TransactionResultResult::TxInsufficientFee);
        }
    }
    if (tx.fee as i64) < inclusion_fee(tx) + declared_resource_fee(tx) {
        return Err(TransactionResultResult::TxInsufficientFee);
    }
    let source = account_of(&tx.source_account);
    let Some(account) = account_entry(ledger, &source) else { return Err(TransactionResultResult::TxNoAccount) };
    if tx.seq_num.0 != account.seq_num.0 + 1 + pending {
        return Err(TransactionResultResult::TxBadSeq);
    }
    if !signed_by(envelope, hash, &source) {
        return Err(TransactionResultResult::TxBadAuth);
    }
    for op in tx.operations.iter() {
        if let Some(op_source) = &op.source_account {
            if !signed_by(envelope, hash, &account_of(op_source)) {
                return Err(TransactionResultResult::TxBadAuth);
            }
        }
    }
    let reserve = (2 + account.num_sub_entries as i64) * BASE_RESERVE as i64;
    if account.balance - reserve < inclusion_fee(tx) + declared_resource_fee(tx) {
        return Err(TransactionResultResult::TxInsufficientBalance);
    }
    Ok(())
}

/// A refused envelope's TransactionResult (nothing charged).
pub fn refusal(code: TransactionResultResult) -> TransactionResult {
    TransactionResult { fee_charged: 0, result: code, ext: TransactionResultExt::V0 }
}

/// What one operation did.
struct OpOutcome {
    result: OperationResult,
    events: Vec<ContractEvent>,
    diagnostics: Vec<DiagnosticEvent>,
    return_value: Option<ScVal>,
    /// Refundable resource fee consumed (Soroban only).
    refundable_fee: i64,
    /// Non-refundable resource fee (Soroban only).
    non_refundable_fee: i64,
}

impl OpOutcome {
    fn classic(result: OperationResultTr) -> Self {
        OpOutcome { result: OperationResult::OpInner(result), events: vec![], diagnostics: vec![], return_value: None, refundable_fee: 0, non_refundable_fee: 0 }
    }
    fn succeeded(&self) -> bool {
        matches!(
            &self.result,
            OperationResult::OpInner(
                OperationResultTr::CreateAccount(CreateAccountResult::Success)
                    | OperationResultTr::Payment(PaymentResult::Success)
                    | OperationResultTr::InvokeHostFunction(InvokeHostFunctionResult::Success(_))
            )
        )
    }
}

fn create_account(ledger: &mut Ledger, source: &AccountId, op: &CreateAccountOp, seq: u32) -> OpOutcome {
    let fail = |code| OpOutcome::classic(OperationResultTr::CreateAccount(code));
    if op.starting_balance <= 0 {
        return fail(CreateAccountResult::Malformed);
    }
    if account_entry(ledger, &op.destination).is_some() {
        return fail(CreateAccountResult::AlreadyExist);
    }
    if op.starting_balance < 2 * BASE_RESERVE as i64 {
        return fail(CreateAccountResult::LowReserve);
    }
    let Some(mut from) = account_entry(ledger, source) else { return OpOutcome { result: OperationResult::OpNoAccount, ..fail(CreateAccountResult::Malformed) } };
    let reserve = (2 + from.num_sub_entries as i64) * BASE_RESERVE as i64;
    if from.balance - reserve < op.starting_balance {
        return fail(CreateAccountResult::Underfunded);
    }
    from.balance -= op.starting_balance;
    put_account(ledger, from, seq);
    put_account(ledger, new_account(op.destination.clone(), op.starting_balance, seq), seq);
    fail(CreateAccountResult::Success)
}

fn payment(ledger: &mut Ledger, source: &AccountId, op: &PaymentOp, seq: u32) -> OpOutcome {
    let fail = |code| OpOutcome::classic(OperationResultTr::Payment(code));
    if op.asset != Asset::Native {
        // Only native payments: no trustlines or classic assets on this network.
        return OpOutcome { result: OperationResult::OpNotSupported, ..fail(PaymentResult::Malformed) };
    }
    if op.amount <= 0 {
        return fail(PaymentResult::Malformed);
    }
    let destination = account_of(&op.destination);
    let Some(mut to) = account_entry(ledger, &destination) else { return fail(PaymentResult::NoDestination) };
    let Some(mut from) = account_entry(ledger, source) else { return OpOutcome { result: OperationResult::OpNoAccount, ..fail(PaymentResult::Malformed) } };
    let reserve = (2 + from.num_sub_entries as i64) * BASE_RESERVE as i64;
    if from.balance - reserve < op.amount {
        return fail(PaymentResult::Underfunded);
    }
    if destination == *source {
        return fail(PaymentResult::Success);
    }
    from.balance -= op.amount;
    to.balance = match to.balance.checked_add(op.amount) {
        Some(balance) => balance,
        None => return fail(PaymentResult::LineFull),
    };
    put_account(ledger, from, seq);
    put_account(ledger, to, seq);
    fail(PaymentResult::Success)
}

/// Runs an InvokeHostFunction operation in the real host in enforcing mode and applies its writes.
fn invoke(ledger: &mut Ledger, network: &NetworkConfig, modules: &Modules, source: &AccountId, op: &InvokeHostFunctionOp, data: &SorobanTransactionData, info: &LedgerInfo, tx_size: u32, seed: [u8; 32]) -> OpOutcome {
    let fail = |code| OpOutcome::classic(OperationResultTr::InvokeHostFunction(code));
    let restored: Vec<u32> = match &data.ext {
        SorobanTransactionDataExt::V1(ext) => ext.archived_soroban_entries.to_vec(),
        SorobanTransactionDataExt::V0 => vec![],
    };
    if !restored.is_empty() {
        // Entries never expire within this network's TTLs, so nothing is ever archived.
        return fail(InvokeHostFunctionResult::Malformed);
    }
    let footprint = &data.resources.footprint;
    modules.ensure(ledger, footprint.read_only.iter().chain(footprint.read_write.iter()));
    let mut entries = Vec::new();
    let mut ttls = Vec::new();
    for key in footprint.read_only.iter().chain(footprint.read_write.iter()) {
        let Some((entry, live_until)) = ledger.get(key) else { continue };
        match live_until {
            Some(live_until) if *live_until < info.sequence_number => {
                if matches!(key, LedgerKey::ContractData(d) if d.durability == soroban_env_host::xdr::ContractDataDurability::Temporary) {
                    continue;
                }
                return fail(InvokeHostFunctionResult::EntryArchived);
            }
            Some(live_until) => ttls.push(to_xdr(&TtlEntry { key_hash: Hash(sha256(&to_xdr(key))), live_until_ledger_seq: *live_until })),
            None => ttls.push(vec![]),
        }
        entries.push(to_xdr(entry));
    }
    let budget = match Budget::try_from_configs(
        data.resources.instructions as u64,
        network.tx_memory_limit as u64,
        network.cpu_cost_params.clone(),
        network.memory_cost_params.clone(),
    ) {
        Ok(budget) => budget,
        Err(_) => return fail(InvokeHostFunctionResult::Malformed),
    };
    let mut diagnostics = Vec::new();
    let auth: Vec<Vec<u8>> = op.auth.iter().map(to_xdr).collect();
    let invoked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        invoke_host_function(
            &budget,
            true,
            to_xdr(&op.host_function),
            to_xdr(&data.resources),
            &restored,
            to_xdr(source),
            auth.into_iter(),
            info.clone(),
            entries.into_iter(),
            ttls.into_iter(),
            seed.to_vec(),
            &mut diagnostics,
            None,
            Some(modules.cache.clone()),
        )
    }));
    let outcome = |code, diagnostics| OpOutcome { diagnostics, ..fail(code) };
    let result = match invoked {
        Ok(Ok(result)) => result,
        Ok(Err(error)) => {
            // The host gave up before running the function: out of budget, or an input it refuses.
            if std::env::var_os("STELLAR_DEVNET_DEBUG").is_some() {
                eprintln!("stellar-devnet: invocation refused by the host: {error:?}");
            }
            let exceeded = error.error.is_type(soroban_env_host::xdr::ScErrorType::Budget);
            let code = if exceeded { InvokeHostFunctionResult::ResourceLimitExceeded } else { InvokeHostFunctionResult::Trapped };
            return outcome(code, diagnostics);
        }
        Err(_) => return outcome(InvokeHostFunctionResult::Trapped, diagnostics),
    };
    let return_value = match &result.encoded_invoke_result {
        Ok(bytes) => match ScVal::from_xdr(bytes, Limits::none()) {
            Ok(value) => value,
            Err(_) => return outcome(InvokeHostFunctionResult::Trapped, diagnostics),
        },
        Err(error) => {
            if std::env::var_os("STELLAR_DEVNET_DEBUG").is_some() {
                eprintln!(
                    "stellar-devnet: invocation failed: {error:?}; cpu {:?} of {} declared, mem {:?}",
                    budget.get_cpu_insns_consumed(), data.resources.instructions, budget.get_mem_bytes_consumed()
                );
                for line in format!("{budget:?}").lines() {
                    let cols: Vec<&str> = line.split_whitespace().collect();
                    if cols.len() > 4 && cols[3] != "0" && cols[3] != "cpu_insns" {
                        eprintln!("  {} {} {} {}", cols[0], cols[1], cols[2], cols[3]);
                    }
                }
            }
            let exceeded = error.error.is_type(soroban_env_host::xdr::ScErrorType::Budget)
                && error.error.is_code(soroban_env_host::xdr::ScErrorCode::ExceededLimit);
            let code = if exceeded { InvokeHostFunctionResult::ResourceLimitExceeded } else { InvokeHostFunctionResult::Trapped };
            return outcome(code, diagnostics);
        }
    };
    if std::env::var_os("STELLAR_DEVNET_DEBUG").is_some() {
        eprintln!("stellar-devnet: applied with {:?} of {} declared instructions", budget.get_cpu_insns_consumed(), data.resources.instructions);
    }
    let events: Vec<ContractEvent> = result
        .encoded_contract_events
        .iter()
        .filter_map(|bytes| ContractEvent::from_xdr(bytes, Limits::none()).ok())
        .collect();
    let events_size = result.encoded_contract_events.iter().map(|e| e.len() as u32).sum::<u32>() + to_xdr(&return_value).len() as u32;
    let (non_refundable, refundable_events) =
        compute_transaction_resource_fee(&transaction_resources(data, tx_size, events_size), &network.fee_configuration);
    let rent = compute_rent_fee(&extract_rent_changes(&result.ledger_changes), &network.rent_fee_configuration, info.sequence_number);
    let refundable = refundable_events + rent;
    if data.resource_fee < non_refundable + refundable {
        return OpOutcome { non_refundable_fee: non_refundable, ..outcome(InvokeHostFunctionResult::InsufficientRefundableFee, diagnostics) };
    }
    for change in &result.ledger_changes {
        let Ok(key) = LedgerKey::from_xdr(&change.encoded_key, Limits::none()) else { continue };
        let new_ttl = change.ttl_change.as_ref().map(|ttl| ttl.new_live_until_ledger);
        if change.read_only {
            if let (Some(ttl), Some((entry, _))) = (new_ttl, ledger.get(&key).cloned()) {
                ledger.put(entry, Some(ttl));
            }
            continue;
        }
        match &change.encoded_new_value {
            Some(bytes) => {
                let Ok(mut entry) = LedgerEntry::from_xdr(bytes, Limits::none()) else { continue };
                entry.last_modified_ledger_seq = info.sequence_number;
                let ttl = new_ttl.or_else(|| ledger.get(&key).and_then(|(_, ttl)| *ttl));
                ledger.put(entry, ttl);
            }
            None => {
                ledger.entries.remove(&to_xdr(&key));
            }
        }
    }
    let hash = Hash(sha256(&to_xdr(&return_value)));
    OpOutcome {
        result: OperationResult::OpInner(OperationResultTr::InvokeHostFunction(InvokeHostFunctionResult::Success(hash))),
        events,
        diagnostics,
        return_value: Some(return_value),
        refundable_fee: refundable,
        non_refundable_fee: non_refundable,
    }
}

/// The changes between two states for the given keys, as meta reports them.
fn changes(before: &BTreeMap<Vec<u8>, (LedgerEntry, Option<u32>)>, after: &BTreeMap<Vec<u8>, (LedgerEntry, Option<u32>)>) -> LedgerEntryChanges {
    let mut list = Vec::new();
    for (key, (old, _)) in before {
        match after.get(key) {
            Some((new, _)) if new != old => {
                list.push(LedgerEntryChange::State(old.clone()));
                list.push(LedgerEntryChange::Updated(new.clone()));
            }
            Some(_) => {}
            None => list.push(LedgerEntryChange::Removed(old.to_key())),
        }
    }
    for (key, (new, _)) in after {
        if !before.contains_key(key) {
            list.push(LedgerEntryChange::Created(new.clone()));
        }
    }
    LedgerEntryChanges(list.try_into().unwrap_or_default())
}

/// Applies one checked transaction in the ledger being closed; returns its record and events.
#[allow(clippy::too_many_arguments)]
pub fn apply(ledger: &mut Ledger, network: &NetworkConfig, modules: &Modules, envelope: &TransactionEnvelope, hash: [u8; 32], info: &LedgerInfo, application_order: u32, created_at: u64) -> (TxRecord, Vec<EventRecord>) {
    let hex_hash = hex::encode(hash);
    let tx = transaction_of(envelope).expect("checked").clone();
    let source = account_of(&tx.source_account);
    let seq = info.sequence_number;
    let mut events_record = TxEvents::default();
    let mut event_records = Vec::new();
    let record = |result: TransactionResult, meta: TransactionMeta, events: TxEvents, success: bool| TxRecord {
        hash: hex_hash.clone(),
        success,
        ledger: seq,
        application_order,
        envelope: to_b64(envelope),
        result: to_b64(&result),
        meta: to_b64(&meta),
        created_at,
        events,
    };

    // The checks again, against the state this ledger reached (another transaction may have spent the balance).
    let checks = Checks { network, close_time: info.timestamp };
    if let Err(code) = check(ledger, envelope, &hash, 0, &checks) {
        let meta = TransactionMeta::V4(empty_meta());
        return (record(refusal(code), meta, events_record, false), vec![]);
    }

    // Fee and sequence number first: they stay even when an operation fails.
    let before_fee = ledger.entries.clone();
    let mut account = account_entry(ledger, &source).expect("checked");
    let upfront = inclusion_fee(&tx) + declared_resource_fee(&tx);
    account.balance -= upfront;
    account.seq_num = tx.seq_num.clone();
    put_account(ledger, account, seq);
    let tx_changes_before = changes(&only_touched(&before_fee, &ledger.entries), &only_touched(&ledger.entries, &before_fee));

    let before_ops = ledger.entries.clone();
    let tx_size = to_xdr(envelope).len() as u32;
    let mut results = Vec::new();
    let mut op_metas = Vec::new();
    let mut return_value = None;
    let mut diagnostics = Vec::new();
    let mut refundable_used = 0;
    let mut non_refundable = 0;
    let mut all_ok = true;
    for (index, op) in tx.operations.iter().enumerate() {
        let op_source = op.source_account.as_ref().map(account_of).unwrap_or_else(|| source.clone());
        let before_op = ledger.entries.clone();
        let outcome = run_op(ledger, network, modules, &op_source, op, &tx, info, tx_size, sha256(&[hash.as_slice(), &(index as u32).to_be_bytes()].concat()));
        all_ok &= outcome.succeeded();
        refundable_used += outcome.refundable_fee;
        non_refundable += outcome.non_refundable_fee;
        diagnostics.extend(outcome.diagnostics.clone());
        if outcome.return_value.is_some() {
            return_value = outcome.return_value.clone();
        }
        op_metas.push(OperationMetaV2 {
            ext: ExtensionPoint::V0,
            changes: changes(&only_touched(&before_op, &ledger.entries), &only_touched(&ledger.entries, &before_op)),
            events: outcome.events.clone().try_into().unwrap_or_default(),
        });
        results.push(outcome);
    }
    if !all_ok {
        // A failed transaction changes nothing but its fee and sequence number.
        ledger.entries = before_ops;
        for meta in op_metas.iter_mut() {
            meta.changes = LedgerEntryChanges(Default::default());
            meta.events = Default::default();
        }
        refundable_used = 0;
    }
    // The unused part of the resource fee goes back to the source account.
    let declared = declared_resource_fee(&tx);
    let charged_resources = if declared > 0 { (non_refundable + refundable_used).min(declared) } else { 0 };
    let refund = declared - charged_resources;
    let before_refund = ledger.entries.clone();
    if refund > 0 {
        let mut account = account_entry(ledger, &source).expect("exists");
        account.balance += refund;
        put_account(ledger, account, seq);
    }
    let tx_changes_after = changes(&only_touched(&before_refund, &ledger.entries), &only_touched(&ledger.entries, &before_refund));
    let fee_charged = upfront - refund;

    let op_results: Vec<OperationResult> = results.iter().map(|outcome| outcome.result.clone()).collect();
    let result = TransactionResult {
        fee_charged,
        result: if all_ok {
            TransactionResultResult::TxSuccess(op_results.try_into().unwrap_or_default())
        } else {
            TransactionResultResult::TxFailed(op_results.try_into().unwrap_or_default())
        },
        ext: TransactionResultExt::V0,
    };
    let soroban = soroban_data(&tx).is_some();
    let meta = TransactionMeta::V4(TransactionMetaV4 {
        ext: ExtensionPoint::V0,
        tx_changes_before,
        operations: op_metas.clone().try_into().unwrap_or_default(),
        tx_changes_after,
        soroban_meta: soroban.then(|| SorobanTransactionMetaV2 {
            ext: SorobanTransactionMetaExt::V0,
            return_value: if all_ok { return_value } else { None },
        }),
        events: Default::default(),
        diagnostic_events: diagnostics.clone().try_into().unwrap_or_default(),
    });

    for (op_index, op_meta) in op_metas.iter().enumerate() {
        let mut listed = Vec::new();
        for (event_index, event) in op_meta.events.iter().enumerate() {
            listed.push(to_b64(event));
            event_records.push(event_record(event, &hex_hash, seq, info.timestamp, application_order, op_index as u32, event_index as u32, all_ok));
        }
        events_record.contract.push(listed);
    }
    events_record.diagnostic = diagnostics.iter().map(to_b64).collect();
    (record(result, meta, events_record, all_ok), event_records)
}

#[allow(clippy::too_many_arguments)]
fn run_op(ledger: &mut Ledger, network: &NetworkConfig, modules: &Modules, source: &AccountId, op: &Operation, tx: &Transaction, info: &LedgerInfo, tx_size: u32, seed: [u8; 32]) -> OpOutcome {
    if account_entry(ledger, source).is_none() {
        return OpOutcome { result: OperationResult::OpNoAccount, ..OpOutcome::classic(OperationResultTr::Payment(PaymentResult::Malformed)) };
    }
    match &op.body {
        OperationBody::CreateAccount(create) => create_account(ledger, source, create, info.sequence_number),
        OperationBody::Payment(pay) => payment(ledger, source, pay, info.sequence_number),
        OperationBody::InvokeHostFunction(invocation) => {
            let data = soroban_data(tx).expect("checked");
            invoke(ledger, network, modules, source, invocation, data, info, tx_size, seed)
        }
        _ => OpOutcome { result: OperationResult::OpNotSupported, ..OpOutcome::classic(OperationResultTr::Payment(PaymentResult::Malformed)) },
    }
}

/// The entries of `a` whose value differs in (or is missing from) `b`.
fn only_touched(a: &BTreeMap<Vec<u8>, (LedgerEntry, Option<u32>)>, b: &BTreeMap<Vec<u8>, (LedgerEntry, Option<u32>)>) -> BTreeMap<Vec<u8>, (LedgerEntry, Option<u32>)> {
    a.iter().filter(|(key, value)| b.get(*key) != Some(*value)).map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn empty_meta() -> TransactionMetaV4 {
    TransactionMetaV4 {
        ext: ExtensionPoint::V0,
        tx_changes_before: LedgerEntryChanges(Default::default()),
        operations: Default::default(),
        tx_changes_after: LedgerEntryChanges(Default::default()),
        soroban_meta: None,
        events: Default::default(),
        diagnostic_events: Default::default(),
    }
}

/// Stellar RPC's event id: the operation's TOID (ledger << 32 | tx order << 12 | op index) and the event's index.
pub fn event_id(ledger: u32, tx_order: u32, op_index: u32, event_index: u32) -> String {
    let toid = ((ledger as u64) << 32) | ((tx_order as u64) << 12) | op_index as u64;
    format!("{toid:019}-{event_index:010}")
}

#[allow(clippy::too_many_arguments)]
fn event_record(event: &ContractEvent, tx_hash: &str, ledger: u32, closed_at: u64, tx_order: u32, op_index: u32, event_index: u32, ok: bool) -> EventRecord {
    let ContractEventBody::V0(body) = &event.body;
    EventRecord {
        id: event_id(ledger, tx_order, op_index, event_index),
        ledger,
        closed_at,
        tx_hash: tx_hash.to_string(),
        tx_index: tx_order,
        op_index,
        kind: match event.type_ {
            soroban_env_host::xdr::ContractEventType::System => "system".into(),
            _ => "contract".into(),
        },
        contract_id: event.contract_id.as_ref().map(|id| stellar_strkey::Contract(id.0 .0).to_string()).unwrap_or_default(),
        topics: body.topics.iter().map(to_b64).collect(),
        value: to_b64(&body.data),
        in_successful_call: ok,
    }
}

/// The ledger info a transaction in ledger `sequence` closing at `close_time` runs with.
pub fn ledger_info(ledger: &Ledger, sequence: u32, close_time: u64) -> LedgerInfo {
    LedgerInfo {
        protocol_version: PROTOCOL_VERSION,
        sequence_number: sequence,
        timestamp: close_time,
        network_id: ledger.network_id,
        base_reserve: BASE_RESERVE,
        min_temp_entry_ttl: config::MIN_TEMP_TTL,
        min_persistent_entry_ttl: config::MIN_PERSISTENT_TTL,
        max_entry_ttl: config::MAX_ENTRY_TTL,
    }
}
