//! The ledger: entries with their TTLs, closed ledgers, transactions and events, saved to the data dir.

use crate::config::RETENTION_WINDOW;
use base64::{engine::general_purpose::STANDARD as B64, Engine};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use soroban_env_host::storage::{EntryWithLiveUntil, SnapshotSource};
use soroban_env_host::xdr::{LedgerEntry, LedgerKey, Limits, ReadXdr, WriteXdr};
use soroban_env_host::HostError;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::rc::Rc;

pub fn to_b64<T: WriteXdr>(value: &T) -> String {
    B64.encode(value.to_xdr(Limits::none()).expect("xdr encodes"))
}

pub fn to_xdr<T: WriteXdr>(value: &T) -> Vec<u8> {
    value.to_xdr(Limits::none()).expect("xdr encodes")
}

pub fn from_b64<T: ReadXdr>(text: &str) -> Result<T, String> {
    let bytes = B64.decode(text.trim()).map_err(|e| format!("not base64: {e}"))?;
    T::from_xdr(bytes, Limits::len(10_000_000)).map_err(|e| format!("not valid XDR: {e}"))
}

pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// One closed ledger.
#[derive(Clone, Serialize, Deserialize)]
pub struct LedgerRecord {
    pub sequence: u32,
    /// 64 hex digits.
    pub hash: String,
    pub close_time: u64,
    /// Hashes of the transactions applied in it, in application order.
    pub txs: Vec<String>,
}

/// The events of one transaction, base64 XDR, as getTransaction's `events` serves them.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct TxEvents {
    pub transaction: Vec<String>,
    pub contract: Vec<Vec<String>>,
    pub diagnostic: Vec<String>,
}

/// One applied transaction.
#[derive(Clone, Serialize, Deserialize)]
pub struct TxRecord {
    pub hash: String,
    pub success: bool,
    pub ledger: u32,
    pub application_order: u32,
    pub envelope: String,
    pub result: String,
    pub meta: String,
    pub created_at: u64,
    pub events: TxEvents,
}

/// One contract event, indexed for getEvents.
#[derive(Clone, Serialize, Deserialize)]
pub struct EventRecord {
    pub id: String,
    pub ledger: u32,
    pub closed_at: u64,
    pub tx_hash: String,
    pub tx_index: u32,
    pub op_index: u32,
    /// "contract" or "system".
    pub kind: String,
    /// C... strkey, or empty when the event has no contract.
    pub contract_id: String,
    pub topics: Vec<String>,
    pub value: String,
    pub in_successful_call: bool,
}

#[derive(Serialize, Deserialize)]
struct Saved {
    passphrase: String,
    time_offset: i64,
    entries: Vec<(String, Option<u32>)>,
    ledgers: Vec<LedgerRecord>,
    txs: Vec<TxRecord>,
    events: Vec<EventRecord>,
}

/// Everything the network holds.
pub struct Ledger {
    pub passphrase: String,
    pub network_id: [u8; 32],
    /// Key XDR -> entry and its live-until ledger (contract data and code only).
    pub entries: BTreeMap<Vec<u8>, (LedgerEntry, Option<u32>)>,
    pub ledgers: Vec<LedgerRecord>,
    pub txs: HashMap<String, TxRecord>,
    pub events: Vec<EventRecord>,
    /// Seconds added to the wall clock (tests move ledger time forward).
    pub time_offset: i64,
    data_dir: Option<PathBuf>,
}

impl Ledger {
    pub fn new(passphrase: &str, data_dir: Option<PathBuf>) -> Self {
        Ledger {
            passphrase: passphrase.to_string(),
            network_id: sha256(passphrase.as_bytes()),
            entries: BTreeMap::new(),
            ledgers: Vec::new(),
            txs: HashMap::new(),
            events: Vec::new(),
            time_offset: 0,
            data_dir,
        }
    }

    fn state_file(&self) -> Option<PathBuf> {
        self.data_dir.as_ref().map(|dir| dir.join("stellar-devnet.json"))
    }

    /// The saved ledger of a previous run, when the data dir has one for this passphrase.
    pub fn load(passphrase: &str, data_dir: Option<PathBuf>) -> Result<Option<Self>, String> {
        let mut ledger = Ledger::new(passphrase, data_dir);
        let Some(file) = ledger.state_file() else { return Ok(None) };
        let Ok(text) = std::fs::read_to_string(&file) else { return Ok(None) };
        let saved: Saved = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        if saved.passphrase != passphrase {
            return Err(format!("{} belongs to network '{}', not '{passphrase}'", file.display(), saved.passphrase));
        }
        for (entry, live_until) in saved.entries {
            let entry: LedgerEntry = from_b64(&entry)?;
            ledger.entries.insert(to_xdr(&entry.to_key()), (entry, live_until));
        }
        ledger.ledgers = saved.ledgers;
        ledger.txs = saved.txs.into_iter().map(|tx| (tx.hash.clone(), tx)).collect();
        ledger.events = saved.events;
        ledger.time_offset = saved.time_offset;
        Ok(Some(ledger))
    }

    /// Writes the whole state (atomically: a temporary file renamed over the old one).
    pub fn save(&self) -> Result<(), String> {
        let Some(file) = self.state_file() else { return Ok(()) };
        let mut txs: Vec<&TxRecord> = self.txs.values().collect();
        txs.sort_by_key(|tx| (tx.ledger, tx.application_order));
        let saved = Saved {
            passphrase: self.passphrase.clone(),
            time_offset: self.time_offset,
            entries: self.entries.values().map(|(entry, ttl)| (to_b64(entry), *ttl)).collect(),
            ledgers: self.ledgers.clone(),
            txs: txs.into_iter().cloned().collect(),
            events: self.events.clone(),
        };
        let text = serde_json::to_string(&saved).map_err(|e| e.to_string())?;
        let temporary = file.with_extension("json.tmp");
        std::fs::write(&temporary, text).map_err(|e| format!("{}: {e}", temporary.display()))?;
        std::fs::rename(&temporary, &file).map_err(|e| format!("{}: {e}", file.display()))
    }

    pub fn latest(&self) -> &LedgerRecord {
        self.ledgers.last().expect("genesis exists")
    }

    pub fn oldest(&self) -> &LedgerRecord {
        self.ledgers.first().expect("genesis exists")
    }

    pub fn get(&self, key: &LedgerKey) -> Option<&(LedgerEntry, Option<u32>)> {
        self.entries.get(&to_xdr(key))
    }

    pub fn put(&mut self, entry: LedgerEntry, live_until: Option<u32>) {
        self.entries.insert(to_xdr(&entry.to_key()), (entry, live_until));
    }

    /// Drops ledgers, transactions and events older than the retention window.
    pub fn trim(&mut self) {
        let latest = self.latest().sequence;
        if latest <= RETENTION_WINDOW {
            return;
        }
        let oldest_kept = latest - RETENTION_WINDOW + 1;
        self.ledgers.retain(|ledger| ledger.sequence >= oldest_kept);
        self.txs.retain(|_, tx| tx.ledger >= oldest_kept);
        self.events.retain(|event| event.ledger >= oldest_kept);
    }
}

/// A snapshot that owns its entries, for the `Rc<dyn SnapshotSource>` simulation wants.
pub struct OwnedSnapshot(pub BTreeMap<Vec<u8>, (LedgerEntry, Option<u32>)>);

impl SnapshotSource for OwnedSnapshot {
    fn get(&self, key: &Rc<LedgerKey>) -> Result<Option<EntryWithLiveUntil>, HostError> {
        Ok(self.0.get(&to_xdr(key.as_ref())).map(|(entry, ttl)| (Rc::new(entry.clone()), *ttl)))
    }
}
