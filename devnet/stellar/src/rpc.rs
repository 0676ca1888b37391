//! The Stellar RPC (JSON-RPC 2.0 over HTTP POST) as @stellar/stellar-sdk's `rpc.Server` calls it,
//! a friendbot-style funding endpoint (`/friendbot?addr=G...`) and two methods for tests
//! (`devnet_increaseTime`, `devnet_closeLedger`).

use crate::apply::{self, account_of, transaction_of};
use crate::config::{self, PROTOCOL_VERSION, RETENTION_WINDOW};
use crate::node::Node;
use crate::state::{from_b64, to_b64, EventRecord, OwnedSnapshot, TxRecord};
use serde_json::{json, Value};
use soroban_env_host::e2e_invoke::RecordingInvocationAuthMode;
use soroban_env_host::xdr::{
    AccountId, LedgerKey, OperationBody, PublicKey, ScVal, TransactionEnvelope, Uint256,
};
use soroban_simulation::simulation::{simulate_invoke_host_function_op, SimulationAdjustmentConfig};
use std::io::Read;
use std::rc::Rc;

/// A JSON-RPC error (code and message).
struct RpcError(i64, String);

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError(-32602, message.into())
}

/// Answers one HTTP request; never panics the process (a panic in a handler becomes an internal error).
pub fn handle(node: &mut Node, mut request: tiny_http::Request) {
    let url = request.url().to_string();
    let host = request
        .headers()
        .iter()
        .find(|h| h.field.equiv("Host"))
        .map(|h| h.value.as_str().to_string())
        .unwrap_or_else(|| "127.0.0.1".into());
    let mut body = String::new();
    let read = request.as_reader().take(16 * 1024 * 1024).read_to_string(&mut body);
    // A browser dApp (the page at /app) calls this RPC from another origin, as it calls a public
    // Stellar RPC, which answers CORS for any origin: the preflight gets 204, every answer the header.
    if *request.method() == tiny_http::Method::Options {
        let preflight = tiny_http::Response::empty(204)
            .with_header(cors_header("Access-Control-Allow-Origin: *"))
            .with_header(cors_header("Access-Control-Allow-Methods: POST, GET, OPTIONS"))
            .with_header(cors_header("Access-Control-Allow-Headers: *"))
            .with_header(cors_header("Access-Control-Max-Age: 600"));
        let _ = request.respond(preflight);
        return;
    }
    let (status, reply) = if url.starts_with("/friendbot") {
        friendbot(node, &url)
    } else if *request.method() != tiny_http::Method::Post {
        (405, json!({ "error": "POST a JSON-RPC request" }))
    } else if read.is_err() {
        (200, error_reply(Value::Null, RpcError(-32700, "the body is not UTF-8 text".into())))
    } else {
        let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| json_rpc(node, &body, &host)));
        (200, answer.unwrap_or_else(|_| error_reply(Value::Null, RpcError(-32603, "internal error".into()))))
    };
    let response = tiny_http::Response::from_string(reply.to_string())
        .with_status_code(status)
        .with_header("Content-Type: application/json".parse::<tiny_http::Header>().expect("header"))
        .with_header(cors_header("Access-Control-Allow-Origin: *"));
    let _ = request.respond(response);
}

fn cors_header(line: &str) -> tiny_http::Header {
    line.parse::<tiny_http::Header>().expect("a fixed, valid header line")
}

fn error_reply(id: Value, RpcError(code, message): RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

fn json_rpc(node: &mut Node, body: &str, host: &str) -> Value {
    let Ok(request) = serde_json::from_str::<Value>(body) else {
        return error_reply(Value::Null, RpcError(-32700, "parse error: the body is not JSON".into()));
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let Some(method) = request.get("method").and_then(Value::as_str) else {
        return error_reply(id, RpcError(-32600, "invalid request: no method".into()));
    };
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    let params = if params.is_null() { json!({}) } else { params };
    if !params.is_object() {
        return error_reply(id, invalid("params must be an object"));
    }
    let result = match method {
        "getHealth" => Ok(health(node)),
        "getNetwork" => Ok(json!({
            "friendbotUrl": format!("http://{host}/friendbot"),
            "passphrase": node.ledger.passphrase,
            "protocolVersion": PROTOCOL_VERSION,
        })),
        "getVersionInfo" => Ok(json!({
            "version": concat!("relayer-stellar-devnet ", env!("CARGO_PKG_VERSION")),
            "commitHash": "",
            "buildTimestamp": "",
            "captiveCoreVersion": "none (soroban-env-host 25.2.2)",
            "protocolVersion": PROTOCOL_VERSION,
        })),
        "getLatestLedger" => Ok(latest_ledger(node)),
        "getFeeStats" => Ok(fee_stats(node)),
        "getLedgerEntries" => ledger_entries(node, &params),
        "getLedgers" => ledgers(node, &params),
        "simulateTransaction" => simulate(node, &params),
        "sendTransaction" => send(node, &params),
        "getTransaction" => transaction(node, &params),
        "getEvents" => events(node, &params),
        "devnet_increaseTime" => increase_time(node, &params),
        "devnet_stop" => {
            // Saved before answering; main exits once the answer is sent.
            node.stopping = true;
            node.ledger.save().map(|_| json!({ "stopped": true })).map_err(|e| RpcError(-32603, e))
        }
        "devnet_closeLedger" => {
            let closed = node.close_ledger();
            Ok(json!({ "sequence": closed.sequence, "closeTime": closed.close_time.to_string() }))
        }
        other => Err(RpcError(-32601, format!("method not found: {other}"))),
    };
    match result {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(error) => error_reply(id, error),
    }
}

fn health(node: &Node) -> Value {
    json!({
        "status": "healthy",
        "latestLedger": node.ledger.latest().sequence,
        "oldestLedger": node.ledger.oldest().sequence,
        "ledgerRetentionWindow": RETENTION_WINDOW,
    })
}

/// The ledger's header and close meta as XDR. The header carries this network's values (the
/// bucket list and result hashes are zero: there are none); the close meta is a v0 one with the
/// header only (transactions are served by getTransaction, not replayed here).
fn ledger_xdr(node: &Node, record: &crate::state::LedgerRecord) -> (String, String, String) {
    use soroban_env_host::xdr::{
        Hash, LedgerCloseMeta, LedgerCloseMetaV0, LedgerHeader, LedgerHeaderExt, LedgerHeaderHistoryEntry,
        LedgerHeaderHistoryEntryExt, StellarValue, StellarValueExt, TimePoint, TransactionSet,
    };
    let hash32 = |hex_text: &str| Hash(hex::decode(hex_text).ok().and_then(|b| b.try_into().ok()).unwrap_or([0; 32]));
    let previous = node
        .ledger
        .ledgers
        .iter()
        .rev()
        .find(|l| l.sequence < record.sequence)
        .map(|l| hash32(&l.hash))
        .unwrap_or(Hash([0; 32]));
    let header = LedgerHeader {
        ledger_version: PROTOCOL_VERSION,
        previous_ledger_hash: previous.clone(),
        scp_value: StellarValue {
            tx_set_hash: Hash(crate::state::sha256(record.txs.join("").as_bytes())),
            close_time: TimePoint(record.close_time),
            upgrades: Default::default(),
            ext: StellarValueExt::Basic,
        },
        tx_set_result_hash: Hash([0; 32]),
        bucket_list_hash: Hash([0; 32]),
        ledger_seq: record.sequence,
        total_coins: 1_000_000_000_000_000_000,
        fee_pool: 0,
        inflation_seq: 0,
        id_pool: 0,
        base_fee: config::BASE_FEE as u32,
        base_reserve: config::BASE_RESERVE,
        max_tx_set_size: 1_000,
        skip_list: [Hash([0; 32]), Hash([0; 32]), Hash([0; 32]), Hash([0; 32])],
        ext: LedgerHeaderExt::V0,
    };
    let entry = LedgerHeaderHistoryEntry { hash: hash32(&record.hash), header: header.clone(), ext: LedgerHeaderHistoryEntryExt::V0 };
    let meta = LedgerCloseMeta::V0(LedgerCloseMetaV0 {
        ledger_header: entry.clone(),
        tx_set: TransactionSet { previous_ledger_hash: previous, txs: Default::default() },
        tx_processing: Default::default(),
        upgrades_processing: Default::default(),
        scp_info: Default::default(),
    });
    (to_b64(&header), to_b64(&entry), to_b64(&meta))
}

fn latest_ledger(node: &Node) -> Value {
    let latest = node.ledger.latest();
    let (header, _, meta) = ledger_xdr(node, latest);
    json!({
        "id": latest.hash, "protocolVersion": PROTOCOL_VERSION, "sequence": latest.sequence,
        "closeTime": latest.close_time.to_string(), "headerXdr": header, "metadataXdr": meta,
    })
}

fn fee_stats(node: &Node) -> Value {
    let base = config::BASE_FEE.to_string();
    let distribution = json!({
        "max": base, "min": base, "mode": base, "p10": base, "p20": base, "p30": base, "p40": base, "p50": base,
        "p60": base, "p70": base, "p80": base, "p90": base, "p95": base, "p99": base,
        "transactionCount": "0", "ledgerCount": 50,
    });
    json!({ "sorobanInclusionFee": distribution, "inclusionFee": distribution, "latestLedger": node.ledger.latest().sequence })
}

fn string_param<'a>(params: &'a Value, name: &str) -> Result<&'a str, RpcError> {
    params.get(name).and_then(Value::as_str).ok_or_else(|| invalid(format!("{name} is required (a string)")))
}

fn ledger_entries(node: &Node, params: &Value) -> Result<Value, RpcError> {
    let keys = params.get("keys").and_then(Value::as_array).ok_or_else(|| invalid("keys is required (an array of base64 LedgerKey XDR)"))?;
    if keys.len() > 200 {
        return Err(invalid("at most 200 keys"));
    }
    let mut entries = Vec::new();
    for key in keys {
        let text = key.as_str().ok_or_else(|| invalid("keys must be strings"))?;
        let parsed: LedgerKey = from_b64(text).map_err(|e| invalid(format!("key {text}: {e}")))?;
        if matches!(parsed, LedgerKey::Ttl(_)) {
            return Err(invalid("TTL keys are not queryable; ask for the entry itself"));
        }
        let Some((entry, live_until)) = node.ledger.get(&parsed) else { continue };
        let mut item = json!({ "key": text, "xdr": to_b64(&entry.data), "lastModifiedLedgerSeq": entry.last_modified_ledger_seq });
        if let Some(live_until) = live_until {
            item["liveUntilLedgerSeq"] = json!(live_until);
        }
        entries.push(item);
    }
    Ok(json!({ "entries": entries, "latestLedger": node.ledger.latest().sequence }))
}

fn range_error(node: &Node, what: &str) -> RpcError {
    RpcError(
        -32600,
        format!(
            "{what} must be between the oldest ledger: {} and the latest ledger: {} for this rpc instance.",
            node.ledger.oldest().sequence,
            node.ledger.latest().sequence
        ),
    )
}

fn limit_of(params: &Value, default: u64, max: u64) -> Result<usize, RpcError> {
    match params.get("pagination").and_then(|p| p.get("limit")) {
        None | Some(Value::Null) => Ok(default as usize),
        Some(value) => match value.as_u64() {
            Some(limit) if limit >= 1 && limit <= max => Ok(limit as usize),
            _ => Err(invalid(format!("pagination.limit must be between 1 and {max}"))),
        },
    }
}

fn cursor_of(params: &Value) -> Result<Option<String>, RpcError> {
    match params.get("pagination").and_then(|p| p.get("cursor")) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(cursor)) if !cursor.is_empty() => Ok(Some(cursor.clone())),
        Some(Value::String(_)) => Ok(None),
        _ => Err(invalid("pagination.cursor must be a string")),
    }
}

fn ledgers(node: &Node, params: &Value) -> Result<Value, RpcError> {
    let limit = limit_of(params, 5, 200)?;
    let start = match cursor_of(params)? {
        Some(cursor) => cursor.parse::<u32>().map_err(|_| invalid("pagination.cursor is not a ledger cursor"))? + 1,
        None => {
            let start = params.get("startLedger").and_then(Value::as_u64).ok_or_else(|| invalid("startLedger or a cursor is required"))? as u32;
            if start < node.ledger.oldest().sequence || start > node.ledger.latest().sequence {
                return Err(range_error(node, "startLedger"));
            }
            start
        }
    };
    let list: Vec<Value> = node
        .ledger
        .ledgers
        .iter()
        .filter(|ledger| ledger.sequence >= start)
        .take(limit)
        .map(|ledger| {
            let (_, entry, meta) = ledger_xdr(node, ledger);
            json!({ "hash": ledger.hash, "sequence": ledger.sequence, "ledgerCloseTime": ledger.close_time.to_string(), "headerXdr": entry, "metadataXdr": meta })
        })
        .collect();
    let cursor = list.last().and_then(|l| l["sequence"].as_u64()).unwrap_or(start as u64).to_string();
    Ok(json!({
        "ledgers": list,
        "latestLedger": node.ledger.latest().sequence,
        "latestLedgerCloseTime": node.ledger.latest().close_time.to_string(),
        "oldestLedger": node.ledger.oldest().sequence,
        "oldestLedgerCloseTime": node.ledger.oldest().close_time.to_string(),
        "cursor": cursor,
    }))
}

fn simulate(node: &Node, params: &Value) -> Result<Value, RpcError> {
    let envelope: TransactionEnvelope = from_b64(string_param(params, "transaction")?).map_err(|e| invalid(format!("transaction: {e}")))?;
    let tx = transaction_of(&envelope).ok_or_else(|| invalid("transaction: only v1 transaction envelopes are simulated"))?;
    let latest = node.ledger.latest().sequence;
    let failure = |message: String| Ok(json!({ "error": message, "events": [], "latestLedger": latest }));
    if tx.operations.len() != 1 {
        return failure("a simulated transaction must have exactly one operation".into());
    }
    let op = &tx.operations[0];
    let OperationBody::InvokeHostFunction(invocation) = &op.body else {
        return failure("only InvokeHostFunction operations are simulated on this network".into());
    };
    let source = op.source_account.as_ref().map(account_of).unwrap_or_else(|| account_of(&tx.source_account));
    let auth_mode = match params.get("authMode").and_then(Value::as_str) {
        Some("enforce") => RecordingInvocationAuthMode::Enforcing(invocation.auth.to_vec()),
        Some("record") => RecordingInvocationAuthMode::Recording(true),
        Some("record_allow_nonroot") => RecordingInvocationAuthMode::Recording(false),
        Some(other) if !other.is_empty() => return Err(invalid(format!("authMode: unknown mode {other}"))),
        _ if invocation.auth.is_empty() => RecordingInvocationAuthMode::Recording(true),
        _ => RecordingInvocationAuthMode::Enforcing(invocation.auth.to_vec()),
    };
    let leeway = params.get("resourceConfig").and_then(|c| c.get("instructionLeeway")).and_then(Value::as_u64).unwrap_or(0);
    let info = apply::ledger_info(&node.ledger, latest + 1, node.next_close_time());
    let snapshot = Rc::new(OwnedSnapshot(node.ledger.entries.clone()));
    let seed = crate::state::sha256(&crate::state::to_xdr(&envelope));
    let simulated = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        simulate_invoke_host_function_op(
            snapshot,
            &node.network,
            &SimulationAdjustmentConfig::default_adjustment(),
            &info,
            invocation.host_function.clone(),
            auth_mode,
            &source,
            seed,
            true,
        )
    }));
    let result = match simulated {
        Ok(Ok(result)) => result,
        Ok(Err(error)) => return failure(format!("simulation failed: {error}")),
        Err(_) => return failure("simulation failed: the host panicked".into()),
    };
    let events: Vec<String> = result.diagnostic_events.iter().map(to_b64).collect();
    let value = match &result.invoke_result {
        Ok(value) => value.clone(),
        Err(error) => return Ok(json!({ "error": format!("HostError: {:?}", error.error), "events": events, "latestLedger": latest })),
    };
    if std::env::var_os("STELLAR_DEVNET_DEBUG").is_some() {
        eprintln!("stellar-devnet: simulated {} instructions", result.simulated_instructions);
    }
    let Some(mut data) = result.transaction_data.clone() else {
        return failure("simulation produced no transaction data".into());
    };
    // Enforcing execution decodes its inputs from XDR under the budget (the host function, the
    // footprint's entries, the auth entries), which the recording run does not pay: add that cost.
    let decoding = decoding_cost(node, &invocation.host_function, &data, &result.auth);
    let extra = leeway.saturating_add(decoding);
    if std::env::var_os("STELLAR_DEVNET_DEBUG").is_some() {
        eprintln!("stellar-devnet: + {decoding} instructions for decoding");
    }
    if extra > 0 {
        let leeway = extra;
        data.resources.instructions = data.resources.instructions.saturating_add(leeway.min(u32::MAX as u64) as u32);
        data.resource_fee += (leeway as i64 * node.network.fee_configuration.fee_per_instruction_increment + 9_999) / 10_000;
    }
    let state_changes: Vec<Value> = result
        .modified_entries
        .iter()
        .map(|diff| {
            let entry = diff.state_after.as_ref().or(diff.state_before.as_ref()).expect("a diff has a side");
            let kind = match (&diff.state_before, &diff.state_after) {
                (None, Some(_)) => "created",
                (Some(_), None) => "deleted",
                _ => "updated",
            };
            json!({
                "type": kind,
                "key": to_b64(&entry.to_key()),
                "before": diff.state_before.as_ref().map(to_b64),
                "after": diff.state_after.as_ref().map(to_b64),
            })
        })
        .collect();
    Ok(json!({
        "latestLedger": latest,
        "minResourceFee": data.resource_fee.to_string(),
        "transactionData": to_b64(&data),
        "results": [{ "auth": result.auth.iter().map(to_b64).collect::<Vec<_>>(), "xdr": to_b64::<ScVal>(&value) }],
        "events": events,
        "cost": { "cpuInsns": result.simulated_instructions.to_string(), "memBytes": result.simulated_memory.to_string() },
        "stateChanges": state_changes,
    }))
}

/// Instructions the host charges (`ValDeser`) for decoding an enforcing invocation's XDR inputs.
fn decoding_cost(node: &Node, host_function: &soroban_env_host::xdr::HostFunction, data: &soroban_env_host::xdr::SorobanTransactionData, auth: &[soroban_env_host::xdr::SorobanAuthorizationEntry]) -> u64 {
    use crate::state::to_xdr;
    use soroban_env_host::xdr::{ContractCostType, Hash, TtlEntry};
    let Ok(budget) = soroban_env_host::budget::Budget::try_from_configs(
        u64::MAX / 4,
        u64::MAX / 4,
        node.network.cpu_cost_params.clone(),
        node.network.memory_cost_params.clone(),
    ) else {
        return 0;
    };
    let mut sizes = vec![to_xdr(host_function).len(), to_xdr(&data.resources).len(), 36];
    // A signed address credential is about 100 bytes longer than the recorded one.
    sizes.extend(auth.iter().map(|entry| to_xdr(entry).len() + 100));
    // Contract code comes parsed from the module cache; the other footprint entries are decoded.
    let footprint = &data.resources.footprint;
    for key in footprint.read_only.iter().chain(footprint.read_write.iter()) {
        if matches!(key, soroban_env_host::xdr::LedgerKey::ContractCode(_)) {
            continue;
        }
        if let Some((entry, live_until)) = node.ledger.get(key) {
            sizes.push(to_xdr(entry).len());
            if live_until.is_some() {
                sizes.push(to_xdr(&TtlEntry { key_hash: Hash([0; 32]), live_until_ledger_seq: 0 }).len());
            }
        }
    }
    for size in sizes {
        let _ = budget.charge(ContractCostType::ValDeser, Some(size as u64));
    }
    budget.get_cpu_insns_consumed().unwrap_or(0)
}

fn send(node: &mut Node, params: &Value) -> Result<Value, RpcError> {
    let envelope: TransactionEnvelope = from_b64(string_param(params, "transaction")?).map_err(|e| invalid(format!("transaction: {e}")))?;
    let latest = node.ledger.latest().clone();
    let hash = hex::encode(envelope.hash(node.ledger.network_id).map_err(|e| invalid(format!("transaction: {e}")))?);
    let base = json!({ "hash": hash, "latestLedger": latest.sequence, "latestLedgerCloseTime": latest.close_time.to_string() });
    let with = |mut value: Value, extra: Value| {
        for (k, v) in extra.as_object().expect("object") {
            value[k] = v.clone();
        }
        value
    };
    if node.ledger.txs.contains_key(&hash) || node.pending.iter().any(|p| hex::encode(p.hash) == hash) {
        return Ok(with(base, json!({ "status": "DUPLICATE" })));
    }
    match node.submit(envelope) {
        Ok(_) => Ok(with(base, json!({ "status": "PENDING" }))),
        Err((_, result)) => Ok(with(base, json!({ "status": "ERROR", "errorResultXdr": to_b64(&result) }))),
    }
}

fn transaction(node: &Node, params: &Value) -> Result<Value, RpcError> {
    let hash = string_param(params, "hash")?.to_lowercase();
    if hash.len() != 64 || !hash.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(invalid("hash must be 64 hex digits"));
    }
    let latest = node.ledger.latest();
    let oldest = node.ledger.oldest();
    let mut reply = json!({
        "latestLedger": latest.sequence,
        "latestLedgerCloseTime": latest.close_time.to_string(),
        "oldestLedger": oldest.sequence,
        "oldestLedgerCloseTime": oldest.close_time.to_string(),
        "txHash": hash,
    });
    let Some(tx) = node.ledger.txs.get(&hash) else {
        reply["status"] = json!("NOT_FOUND");
        return Ok(reply);
    };
    fill_transaction(&mut reply, tx);
    Ok(reply)
}

fn fill_transaction(reply: &mut Value, tx: &TxRecord) {
    reply["status"] = json!(if tx.success { "SUCCESS" } else { "FAILED" });
    reply["ledger"] = json!(tx.ledger);
    reply["createdAt"] = json!(tx.created_at.to_string());
    reply["applicationOrder"] = json!(tx.application_order);
    reply["feeBump"] = json!(false);
    reply["envelopeXdr"] = json!(tx.envelope);
    reply["resultXdr"] = json!(tx.result);
    reply["resultMetaXdr"] = json!(tx.meta);
    reply["diagnosticEventsXdr"] = json!(tx.events.diagnostic);
    reply["events"] = json!({
        "transactionEventsXdr": tx.events.transaction,
        "contractEventsXdr": tx.events.contract,
    });
}

/// One topic filter segment: a base64 ScVal, `*` (any one topic) or, last, `**` (any number).
fn topic_matches(filter: &[String], topics: &[String]) -> bool {
    let open_ended = filter.last().map(|s| s == "**").unwrap_or(false);
    let fixed = if open_ended { &filter[..filter.len() - 1] } else { filter };
    if open_ended { topics.len() < fixed.len() } else { topics.len() != fixed.len() }
        .then_some(false)
        .unwrap_or_else(|| fixed.iter().zip(topics).all(|(want, got)| want == "*" || want == got))
}

struct Filter {
    kind: Option<String>,
    contracts: Vec<String>,
    topics: Vec<Vec<String>>,
}

impl Filter {
    fn matches(&self, event: &EventRecord) -> bool {
        self.kind.as_ref().map(|k| k == &event.kind).unwrap_or(true)
            && (self.contracts.is_empty() || self.contracts.contains(&event.contract_id))
            && (self.topics.is_empty() || self.topics.iter().any(|topic| topic_matches(topic, &event.topics)))
    }
}

fn parse_filters(params: &Value) -> Result<Vec<Filter>, RpcError> {
    let Some(list) = params.get("filters") else { return Ok(vec![]) };
    let list = list.as_array().ok_or_else(|| invalid("filters must be an array"))?;
    if list.len() > 5 {
        return Err(invalid("at most 5 filters"));
    }
    list.iter()
        .enumerate()
        .map(|(i, filter)| {
            let kind = match filter.get("type").and_then(Value::as_str) {
                None | Some("") => None,
                Some(kind @ ("contract" | "system" | "diagnostic")) => Some(kind.to_string()),
                Some(other) => return Err(invalid(format!("filter {}: type must be contract, system or diagnostic, not {other}", i + 1))),
            };
            let contracts: Vec<String> = match filter.get("contractIds") {
                None | Some(Value::Null) => vec![],
                Some(Value::Array(ids)) => ids
                    .iter()
                    .map(|id| {
                        let id = id.as_str().ok_or_else(|| invalid(format!("filter {}: contractIds must be strings", i + 1)))?;
                        stellar_strkey::Contract::from_string(id).map_err(|_| invalid(format!("filter {}: contract id {id} is not a C... strkey", i + 1)))?;
                        Ok(id.to_string())
                    })
                    .collect::<Result<_, RpcError>>()?,
                _ => return Err(invalid(format!("filter {}: contractIds must be an array", i + 1))),
            };
            if contracts.len() > 5 {
                return Err(invalid(format!("filter {}: at most 5 contractIds", i + 1)));
            }
            let topics: Vec<Vec<String>> = match filter.get("topics") {
                None | Some(Value::Null) => vec![],
                Some(Value::Array(topics)) => topics
                    .iter()
                    .map(|topic| {
                        let segments = topic.as_array().ok_or_else(|| invalid(format!("filter {}: each topic filter is an array", i + 1)))?;
                        if segments.is_empty() || segments.len() > 5 {
                            return Err(invalid(format!("filter {}: a topic filter has 1 to 5 segments", i + 1)));
                        }
                        segments
                            .iter()
                            .enumerate()
                            .map(|(j, segment)| {
                                let text = segment.as_str().ok_or_else(|| invalid(format!("filter {}: topic segments are strings", i + 1)))?;
                                if text == "*" || (text == "**" && j == segments.len() - 1) {
                                    return Ok(text.to_string());
                                }
                                let value: ScVal = from_b64(text).map_err(|e| invalid(format!("filter {}: topic segment {text}: {e}", i + 1)))?;
                                Ok(to_b64(&value))
                            })
                            .collect()
                    })
                    .collect::<Result<_, RpcError>>()?,
                _ => return Err(invalid(format!("filter {}: topics must be an array", i + 1))),
            };
            Ok(Filter { kind, contracts, topics })
        })
        .collect()
}

/// ISO 8601 (UTC) of a unix time, as Stellar RPC spells `ledgerClosedAt`.
fn iso_time(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let seconds = unix % 86_400;
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", seconds / 3600, seconds / 60 % 60, seconds % 60)
}

fn events(node: &Node, params: &Value) -> Result<Value, RpcError> {
    let filters = parse_filters(params)?;
    let limit = limit_of(params, 100, 10_000)?;
    let cursor = cursor_of(params)?;
    let latest = node.ledger.latest().sequence;
    let oldest = node.ledger.oldest().sequence;
    let start = params.get("startLedger").and_then(Value::as_u64).map(|s| s as u32);
    let end = params.get("endLedger").and_then(Value::as_u64).map(|s| s as u32);
    if cursor.is_some() && start.is_some() {
        return Err(invalid("startLedger and cursor cannot both be set"));
    }
    let after: String = match (&cursor, start) {
        (Some(cursor), _) => cursor.clone(),
        (None, Some(start)) => {
            if start < oldest || start > latest {
                return Err(range_error(node, "startLedger"));
            }
            apply::event_id(start, 0, 0, 0)
        }
        (None, None) => return Err(invalid("startLedger or a cursor is required")),
    };
    if let (Some(start), Some(end)) = (start, end) {
        if end <= start {
            return Err(invalid("endLedger must be after startLedger"));
        }
    }
    let end_exclusive = end.unwrap_or(latest + 1).min(latest + 1);
    let inclusive_start = cursor.is_none();
    let mut found = Vec::new();
    for event in &node.ledger.events {
        let past_cursor = if inclusive_start { event.id >= after } else { event.id > after };
        if !past_cursor || event.ledger >= end_exclusive {
            continue;
        }
        if !filters.is_empty() && !filters.iter().any(|f| f.matches(event)) {
            continue;
        }
        found.push(event);
        if found.len() == limit {
            break;
        }
    }
    let cursor = match found.last() {
        Some(last) if found.len() == limit => last.id.clone(),
        _ => apply::event_id(end_exclusive, 0, 0, 0),
    };
    let list: Vec<Value> = found
        .iter()
        .map(|event| {
            json!({
                "type": event.kind,
                "ledger": event.ledger,
                "ledgerClosedAt": iso_time(event.closed_at),
                "contractId": event.contract_id,
                "id": event.id,
                "pagingToken": event.id,
                "operationIndex": event.op_index,
                "transactionIndex": event.tx_index,
                "txHash": event.tx_hash,
                "inSuccessfulContractCall": event.in_successful_call,
                "topic": event.topics,
                "value": event.value,
            })
        })
        .collect();
    Ok(json!({
        "events": list,
        "cursor": cursor,
        "latestLedger": latest,
        "oldestLedger": oldest,
        "latestLedgerCommitTime": node.ledger.latest().close_time.to_string(),
        "oldestLedgerCommitTime": node.ledger.oldest().close_time.to_string(),
    }))
}

fn increase_time(node: &mut Node, params: &Value) -> Result<Value, RpcError> {
    let seconds = params.get("seconds").and_then(Value::as_i64).ok_or_else(|| invalid("seconds is required (a positive integer)"))?;
    if seconds <= 0 {
        return Err(invalid("seconds must be positive: ledger time never goes back"));
    }
    node.ledger.time_offset += seconds;
    let closed = node.close_ledger();
    Ok(json!({ "sequence": closed.sequence, "closeTime": closed.close_time.to_string() }))
}

fn friendbot(node: &mut Node, url: &str) -> (u16, Value) {
    let address = url
        .split_once('?')
        .map(|(_, query)| query)
        .unwrap_or("")
        .split('&')
        .find_map(|pair| pair.strip_prefix("addr="))
        .unwrap_or("");
    let Ok(key) = stellar_strkey::ed25519::PublicKey::from_string(address) else {
        return (400, json!({ "status": 400, "detail": format!("addr must be a G... account, not '{address}'") }));
    };
    let account = AccountId(PublicKey::PublicKeyTypeEd25519(Uint256(key.0)));
    match node.friendbot(account) {
        Ok(tx) => (
            200,
            json!({
                "hash": tx.hash, "successful": true, "ledger": tx.ledger,
                "envelope_xdr": tx.envelope, "result_xdr": tx.result, "result_meta_xdr": tx.meta,
            }),
        ),
        Err(message) => (400, json!({ "status": 400, "detail": message })),
    }
}
