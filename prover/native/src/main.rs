//! `relayer-groth16 --zkey <path> [--threads <n>]`: a long-lived Groth16 prover (and verifier) speaking
//! line-delimited JSON on stdin/stdout, so the zkey is parsed once per process.
//!
//! With `RELAYER_GROTH16_VKEY=<verification_key.json>` in its environment it also prepares that key
//! for `verify` (an environment variable, not a flag, so a client can offer it to an older binary,
//! which ignores it: the ready line's `"verifier"` says whether the key was taken).
//!
//! On start it prints `{"ready":true,"nVars":…,"nPublic":…,"domainSize":…,"threads":…,"verifier":…}`. Then, one
//! request per line, one reply per line, in order:
//! - `{"id":…,"wtns":"<base64 of circom's .wtns>"}` → `{"id":…,"proof":{…},"publicSignals":[…],"proveMs":…}`
//!   (snarkjs's JSON forms);
//! - `{"id":…,"cmd":"vk"}` → the verification key read from the zkey;
//! - `{"id":…,"cmd":"verify","proof":{…},"publicSignals":[…]}` → `{"id":…,"valid":true|false,"verifyMs":…}`
//!   against the `RELAYER_GROTH16_VKEY` verification key (snarkjs's `verification_key.json`), prepared once;
//! - anything that fails → `{"id":…,"error":"…"}`; the process keeps serving.
//!
//! It exits when stdin closes (its parent went away). `--threads` sizes the rayon pool that one
//! proof's FFTs and multi-exponentiations share (default 1: the proof pool is the parallelism).

mod json;
mod msm;
mod prove;
mod verify;
mod wtns;
mod zkey;

use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};
use std::time::Instant;

use base64::Engine;
use rand::rngs::OsRng;
use serde_json::{json, Value};

use prove::Prover;
use verify::PreparedVerifier;

struct Args {
    zkey: String,
    threads: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut zkey = None;
    let mut threads = 1;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--zkey" => zkey = args.next(),
            "--threads" => {
                let value = args.next().unwrap_or_default();
                threads = value.parse().ok().filter(|&n| n >= 1).ok_or(format!("--threads must be a positive integer, received '{value}'"))?;
            }
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    Ok(Args { zkey: zkey.ok_or("--zkey <path> is required")?, threads })
}

fn dispatch(prover: &Prover, verifier: Option<&PreparedVerifier>, request: &Value) -> Result<Value, String> {
    match request.get("cmd").and_then(Value::as_str).unwrap_or("prove") {
        "prove" => {
            let encoded = request.get("wtns").and_then(Value::as_str).ok_or("request has no 'wtns' (base64 string)")?;
            let bytes = base64::engine::general_purpose::STANDARD.decode(encoded).map_err(|e| format!("'wtns' is not base64: {e}"))?;
            let witness = wtns::read_witness(&bytes)?;
            let started = Instant::now();
            let proof = prover.prove(&witness, &mut OsRng)?;
            let public: Vec<String> = witness[1..=prover.key.n_public].iter().map(|x| json::decimal(*x)).collect();
            Ok(json!({ "proof": json::proof(&proof), "publicSignals": public, "proveMs": started.elapsed().as_secs_f64() * 1000.0 }))
        }
        "vk" => Ok(json::verification_key(&prover.key)),
        "verify" => {
            let verifier = verifier.ok_or("started without RELAYER_GROTH16_VKEY: no verification key to verify with")?;
            let proof = verify::proof(request.get("proof").ok_or("request has no 'proof'")?)?;
            let public = verify::public_signals(request.get("publicSignals").ok_or("request has no 'publicSignals'")?)?;
            let started = Instant::now();
            let valid = verifier.verify(&proof, &public)?;
            Ok(json!({ "valid": valid, "verifyMs": started.elapsed().as_secs_f64() * 1000.0 }))
        }
        other => Err(format!("unknown cmd '{other}'")),
    }
}

/// One reply per request line; a panic in one proof becomes that request's error.
fn handle(prover: &Prover, verifier: Option<&PreparedVerifier>, line: &str) -> Value {
    let request: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(error) => return json!({ "id": null, "error": format!("request is not JSON: {error}") }),
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    match panic::catch_unwind(AssertUnwindSafe(|| dispatch(prover, verifier, &request))) {
        Ok(Ok(mut reply)) => {
            reply["id"] = id;
            reply
        }
        Ok(Err(error)) => json!({ "id": id, "error": error }),
        Err(_) => json!({ "id": id, "error": "prover panicked (see its stderr)" }),
    }
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    rayon::ThreadPoolBuilder::new().num_threads(args.threads).build_global().map_err(|e| e.to_string())?;
    let bytes = std::fs::read(&args.zkey).map_err(|e| format!("cannot read {}: {e}", args.zkey))?;
    let prover = Prover::new(zkey::ProvingKey::from_zkey(&bytes)?)?;
    drop(bytes);
    let verifier = match std::env::var("RELAYER_GROTH16_VKEY").ok().filter(|path| !path.is_empty()) {
        Some(path) => {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
            let key = serde_json::from_str(&text).map_err(|e| format!("{path} is not JSON: {e}"))?;
            Some(PreparedVerifier::from_json(&key).map_err(|e| format!("{path}: {e}"))?)
        }
        None => None,
    };

    let mut out = io::stdout().lock();
    let ready = json!({ "ready": true, "nVars": prover.key.n_vars, "nPublic": prover.key.n_public, "domainSize": prover.key.domain_size, "threads": args.threads, "verifier": verifier.is_some() });
    writeln!(out, "{ready}").and_then(|_| out.flush()).map_err(|e| e.to_string())?;
    for line in io::stdin().lock().lines() {
        let line = line.map_err(|e| e.to_string())?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = handle(&prover, verifier.as_ref(), &line);
        // A closed stdout means the parent is gone: stop quietly.
        if writeln!(out, "{reply}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
    Ok(())
}

fn main() {
    if let Err(error) = run() {
        eprintln!("relayer-groth16: {error}");
        std::process::exit(1);
    }
}
