//! The network's one validator: a queue of admitted transactions applied when a ledger closes.

use crate::apply::{self, account_entry, Checks};
use crate::config;
use crate::state::{sha256, Ledger, LedgerRecord, TxRecord};
use ed25519_dalek::{Signer, SigningKey};
use soroban_env_host::xdr::{
    AccountId, CreateAccountOp, DecoratedSignature, Memo, MuxedAccount, Operation, OperationBody, Preconditions,
    PublicKey, SequenceNumber, Signature, SignatureHint, Transaction, TransactionEnvelope, TransactionExt,
    TransactionResult, TransactionResultResult, TransactionV1Envelope, Uint256,
};
use soroban_simulation::NetworkConfig;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

/// All lumens at genesis (100 billion XLM in stroops), held by the root account.
const TOTAL_COINS: i64 = 1_000_000_000_000_000_000;
/// What the funding endpoint gives a new account: 10,000 XLM.
pub const FRIENDBOT_STARTING_BALANCE: i64 = 100_000_000_000;
/// Save the state at least every this many ledgers, even without transactions.
const SAVE_EVERY: u32 = 10;

pub fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// A submitted transaction waiting for the next ledger.
pub struct Pending {
    pub hash: [u8; 32],
    pub envelope: TransactionEnvelope,
    pub source: AccountId,
}

pub struct Node {
    pub ledger: Ledger,
    pub network: NetworkConfig,
    pub modules: apply::Modules,
    pub pending: Vec<Pending>,
    /// The root account's key: sha256(passphrase) as seed, as stellar-core derives it.
    pub root: SigningKey,
    /// Set by `devnet_stop`: the process exits after answering.
    pub stopping: bool,
    since_save: u32,
}

pub fn account_id(key: &SigningKey) -> AccountId {
    AccountId(PublicKey::PublicKeyTypeEd25519(Uint256(key.verifying_key().to_bytes())))
}

impl Node {
    /// Loads the data dir's ledger, or starts a new network whose genesis gives the root account every lumen.
    pub fn start(passphrase: &str, data_dir: Option<PathBuf>) -> Result<Node, String> {
        let root = SigningKey::from_bytes(&sha256(passphrase.as_bytes()));
        let ledger = match Ledger::load(passphrase, data_dir.clone())? {
            Some(ledger) => ledger,
            None => {
                let mut ledger = Ledger::new(passphrase, data_dir);
                ledger.put(
                    soroban_env_host::xdr::LedgerEntry {
                        last_modified_ledger_seq: 1,
                        data: soroban_env_host::xdr::LedgerEntryData::Account(apply::new_account(account_id(&root), TOTAL_COINS, 0)),
                        ext: soroban_env_host::xdr::LedgerEntryExt::V0,
                    },
                    None,
                );
                ledger.ledgers.push(LedgerRecord { sequence: 1, hash: hex::encode(sha256(passphrase.as_bytes())), close_time: unix_now(), txs: vec![] });
                ledger.save()?;
                ledger
            }
        };
        let network = config::network_config();
        let modules = apply::Modules::new(&network)?;
        Ok(Node { ledger, network, modules, pending: Vec::new(), root, stopping: false, since_save: 0 })
    }

    /// The time the next ledger closes at: the wall clock plus the tests' offset, never before the last close + 1 s.
    pub fn next_close_time(&self) -> u64 {
        self.clock_time().max(self.ledger.latest().close_time + 1)
    }

    /// The wall clock plus the tests' offset, in seconds.
    pub fn clock_time(&self) -> u64 {
        (unix_now() as i64 + self.ledger.time_offset).max(0) as u64
    }

    pub fn checks(&self) -> Checks<'_> {
        Checks { network: &self.network, close_time: self.next_close_time() }
    }

    /// Admits a transaction for the next ledger, or answers the result it is refused with.
    pub fn submit(&mut self, envelope: TransactionEnvelope) -> Result<[u8; 32], ([u8; 32], TransactionResult)> {
        let hash = envelope.hash(self.ledger.network_id).unwrap_or([0; 32]);
        let Some(tx) = apply::transaction_of(&envelope) else {
            return Err((hash, apply::refusal(TransactionResultResult::TxNotSupported)));
        };
        let source = apply::account_of(&tx.source_account);
        let queued = self.pending.iter().filter(|p| p.source == source).count() as i64;
        if let Err(code) = apply::check(&self.ledger, &envelope, &hash, queued, &self.checks()) {
            return Err((hash, apply::refusal(code)));
        }
        self.pending.push(Pending { hash, envelope, source });
        Ok(hash)
    }

    /// Closes a ledger: applies the queued transactions in arrival order, records them and their events.
    pub fn close_ledger(&mut self) -> &LedgerRecord {
        let sequence = self.ledger.latest().sequence + 1;
        let close_time = self.next_close_time();
        let info = apply::ledger_info(&self.ledger, sequence, close_time);
        let pending = std::mem::take(&mut self.pending);
        let mut hashes = Vec::new();
        for (index, tx) in pending.into_iter().enumerate() {
            let (record, events) = apply::apply(&mut self.ledger, &self.network, &self.modules, &tx.envelope, tx.hash, &info, index as u32 + 1, close_time);
            hashes.push(record.hash.clone());
            self.ledger.txs.insert(record.hash.clone(), record);
            self.ledger.events.extend(events);
        }
        let previous = self.ledger.latest().hash.clone();
        let mut preimage = hex::decode(&previous).unwrap_or_default();
        preimage.extend(sequence.to_be_bytes());
        preimage.extend(close_time.to_be_bytes());
        for hash in &hashes {
            preimage.extend(hex::decode(hash).unwrap_or_default());
        }
        let had_txs = !hashes.is_empty();
        self.ledger.ledgers.push(LedgerRecord { sequence, hash: hex::encode(sha256(&preimage)), close_time, txs: hashes });
        self.ledger.trim();
        self.since_save += 1;
        if had_txs || self.since_save >= SAVE_EVERY {
            if let Err(error) = self.ledger.save() {
                eprintln!("stellar-devnet: cannot save the ledger: {error}");
            }
            self.since_save = 0;
        }
        self.ledger.latest()
    }

    /// Funds a new account from the root with a real CreateAccount transaction, closed at once.
    pub fn friendbot(&mut self, destination: AccountId) -> Result<TxRecord, String> {
        if account_entry(&self.ledger, &destination).is_some() {
            return Err("createAccountAlreadyExist: the account is already funded".into());
        }
        let root_id = account_id(&self.root);
        let root = account_entry(&self.ledger, &root_id).ok_or("the root account is missing")?;
        let queued = self.pending.iter().filter(|p| p.source == root_id).count() as i64;
        let tx = Transaction {
            source_account: MuxedAccount::Ed25519(Uint256(self.root.verifying_key().to_bytes())),
            fee: config::BASE_FEE as u32,
            seq_num: SequenceNumber(root.seq_num.0 + 1 + queued),
            cond: Preconditions::None,
            memo: Memo::None,
            operations: vec![Operation {
                source_account: None,
                body: OperationBody::CreateAccount(CreateAccountOp { destination, starting_balance: FRIENDBOT_STARTING_BALANCE }),
            }]
            .try_into()
            .expect("one operation"),
            ext: TransactionExt::V0,
        };
        let mut envelope = TransactionEnvelope::Tx(TransactionV1Envelope { tx, signatures: Default::default() });
        let hash = envelope.hash(self.ledger.network_id).map_err(|e| e.to_string())?;
        let signature = self.root.sign(&hash).to_bytes();
        if let TransactionEnvelope::Tx(v1) = &mut envelope {
            let key = self.root.verifying_key().to_bytes();
            v1.signatures = vec![DecoratedSignature {
                hint: SignatureHint(key[28..32].try_into().expect("4 bytes")),
                signature: Signature(signature.to_vec().try_into().expect("64 bytes")),
            }]
            .try_into()
            .expect("one signature");
        }
        self.submit(envelope).map_err(|(_, result)| format!("funding refused: {:?}", result.result))?;
        self.close_ledger();
        let record = self.ledger.txs.get(&hex::encode(hash)).cloned().ok_or("the funding transaction was not applied")?;
        if !record.success {
            return Err(format!("funding failed: {}", record.result));
        }
        Ok(record)
    }
}
