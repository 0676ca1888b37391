//! The relayer's PKCS#11 signer (chains/signer/README.md).
//!
//! `relayer-pkcs11-signer serve [--pin-stdin]`: a long-lived child process of the relayer. It opens
//! the token named by PKCS11_TOKEN_LABEL in the library PKCS11_MODULE, logs in with the PIN (with
//! `--pin-stdin` the first line of its stdin, so the PIN is in no environment; else PKCS11_PIN or
//! the first line of PKCS11_PIN_FILE), prints `{"ready":true}` and then answers one JSON request per
//! stdin line with one JSON response per stdout line, in order:
//!   {"id":1,"op":"public-key","label":"relayer-evm"}            -> {"id":1,"publicKey":"<hex>"}
//!   {"id":2,"op":"sign","label":"relayer-evm","mechanism":"ecdsa","data":"<hex>"}
//!                                                               -> {"id":2,"signature":"<hex>"}
//!   any failure                                                 -> {"id":n,"error":"..."}
//! `ecdsa` is CKM_ECDSA over the given digest (raw r‖s); `ecdsa-secp256k1` is the same made into
//! the 65-byte signature EVM contracts recover: s normalised low (EIP-2) and v (27 or 28) the
//! recovery id whose recovered key is the token's public key of that label; `eddsa` is CKM_EDDSA
//! (pure Ed25519, single-part C_Sign) over the given message. The public key is CKA_EC_POINT with
//! its DER OCTET STRING wrapper removed (65-byte uncompressed point, or 32 bytes for Ed25519).
//!
//! `relayer-pkcs11-signer generate --curve secp256k1|ed25519 --label L`: generates a key pair inside
//! the token (private key sensitive, not extractable) and prints its public key as hex.
//!
//! Private keys never leave the token: nothing here reads CKA_VALUE.

use cryptoki::context::{CInitializeArgs, CInitializeFlags, Pkcs11};
use cryptoki::mechanism::eddsa::{EddsaParams, EddsaSignatureScheme};
use cryptoki::mechanism::Mechanism;
use cryptoki::object::{Attribute, AttributeType, ObjectClass, ObjectHandle};
use cryptoki::session::{Session, UserType};
use cryptoki::types::AuthPin;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, Write};

/// DER of OID 1.3.132.0.10 (secp256k1).
const SECP256K1_PARAMS: &[u8] = &[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x0a];
/// DER of OID 1.3.101.112 (Ed25519, RFC 8410).
const ED25519_PARAMS: &[u8] = &[0x06, 0x03, 0x2b, 0x65, 0x70];

type Fallible<T> = Result<T, String>;

#[derive(Deserialize, Clone)]
struct Request {
    id: Value,
    op: String,
    label: String,
    mechanism: Option<String>,
    data: Option<String>,
}

fn env(name: &str) -> Fallible<String> {
    std::env::var(name).map_err(|_| format!("{name} is not set"))
}

/// The PIN from the environment (`generate`, or `serve` without `--pin-stdin`).
fn pin_from_env() -> Fallible<String> {
    if let Ok(pin) = std::env::var("PKCS11_PIN") {
        if !pin.is_empty() {
            return Ok(pin);
        }
    }
    let path = env("PKCS11_PIN_FILE").map_err(|_| "PKCS11_PIN or PKCS11_PIN_FILE must be set".to_string())?;
    let text = std::fs::read_to_string(&path).map_err(|e| format!("PKCS11_PIN_FILE {path}: {e}"))?;
    let pin = text.lines().next().unwrap_or("").trim().to_string();
    if pin.is_empty() {
        return Err(format!("PKCS11_PIN_FILE {path} is empty"));
    }
    Ok(pin)
}

/// Opens a logged-in read-write session on the configured token, with `pin` or the environment's.
fn open(pin: Option<String>) -> Fallible<(Pkcs11, Session)> {
    let pin = match pin {
        Some(pin) => pin,
        None => pin_from_env()?,
    };
    let module = env("PKCS11_MODULE")?;
    let token = env("PKCS11_TOKEN_LABEL")?;
    let pkcs11 = Pkcs11::new(&module).map_err(|e| format!("PKCS11_MODULE {module}: {e}"))?;
    pkcs11
        .initialize(CInitializeArgs::new(CInitializeFlags::OS_LOCKING_OK))
        .map_err(|e| format!("C_Initialize: {e}"))?;
    let slots = pkcs11.get_slots_with_token().map_err(|e| format!("C_GetSlotList: {e}"))?;
    let slot = slots
        .into_iter()
        .find(|slot| pkcs11.get_token_info(*slot).map(|info| info.label().trim_end() == token).unwrap_or(false))
        .ok_or_else(|| format!("PKCS11_TOKEN_LABEL: no token labelled '{token}' in {module}"))?;
    let session = pkcs11.open_rw_session(slot).map_err(|e| format!("C_OpenSession: {e}"))?;
    session
        .login(UserType::User, Some(&AuthPin::new(pin.into())))
        .map_err(|e| format!("C_Login (PKCS11_PIN): {e}"))?;
    Ok((pkcs11, session))
}

fn find_one(session: &Session, class: ObjectClass, label: &str) -> Fallible<ObjectHandle> {
    let found = session
        .find_objects(&[Attribute::Class(class), Attribute::Label(label.as_bytes().to_vec())])
        .map_err(|e| format!("C_FindObjects: {e}"))?;
    match found.len() {
        1 => Ok(found[0]),
        0 => Err(format!("no {class} labelled '{label}' in the token")),
        n => Err(format!("{n} objects of class {class} labelled '{label}': labels must be unique")),
    }
}

/// CKA_EC_POINT without its DER OCTET STRING wrapper (SoftHSM and most tokens wrap it).
fn unwrap_point(point: Vec<u8>) -> Vec<u8> {
    if point.len() >= 2 && point[0] == 0x04 {
        let (len, header) = match point[1] {
            n if n < 0x80 => (n as usize, 2),
            0x81 if point.len() >= 3 => (point[2] as usize, 3),
            _ => (0, 0),
        };
        if header > 0 && point.len() == header + len {
            return point[header..].to_vec();
        }
    }
    point
}

fn public_key(session: &Session, label: &str) -> Fallible<Vec<u8>> {
    let key = find_one(session, ObjectClass::PUBLIC_KEY, label)?;
    let attributes = session
        .get_attributes(key, &[AttributeType::EcPoint])
        .map_err(|e| format!("C_GetAttributeValue: {e}"))?;
    match attributes.into_iter().next() {
        Some(Attribute::EcPoint(point)) => Ok(unwrap_point(point)),
        _ => Err(format!("public key '{label}' has no CKA_EC_POINT")),
    }
}

/// r‖s from the token as r‖s‖v: s low, v = 27 + the recovery id that recovers `public` (SEC1 point).
fn recoverable(digest: &[u8], rs: &[u8], public: &[u8]) -> Fallible<Vec<u8>> {
    use k256::ecdsa::{RecoveryId, Signature, VerifyingKey};
    let expected = VerifyingKey::from_sec1_bytes(public).map_err(|e| format!("the token's public key is not secp256k1: {e}"))?;
    let signature = Signature::from_slice(rs).map_err(|e| format!("the token's ECDSA signature: {e}"))?;
    let signature = signature.normalize_s().unwrap_or(signature);
    for id in 0..2u8 {
        let recid = RecoveryId::from_byte(id).expect("0 and 1 are recovery ids");
        if VerifyingKey::recover_from_prehash(digest, &signature, recid).ok().as_ref() == Some(&expected) {
            let mut out = signature.to_bytes().to_vec();
            out.push(27 + id);
            return Ok(out);
        }
    }
    Err("the token's signature recovers to neither candidate key".to_string())
}

fn sign(session: &Session, keys: &mut HashMap<String, ObjectHandle>, points: &mut HashMap<String, Vec<u8>>, request: &Request) -> Fallible<Vec<u8>> {
    let data = hex::decode(request.data.as_deref().ok_or("data is required")?).map_err(|e| format!("data: {e}"))?;
    if request.mechanism.as_deref() == Some("ecdsa-secp256k1") {
        if data.len() != 32 {
            return Err(format!("ecdsa-secp256k1 signs a 32-byte digest, received {} bytes", data.len()));
        }
        let public = match points.get(&request.label) {
            Some(point) => point.clone(),
            None => {
                let point = public_key(session, &request.label)?;
                points.insert(request.label.clone(), point.clone());
                point
            }
        };
        let raw = sign(session, keys, points, &Request { mechanism: Some("ecdsa".to_string()), ..request.clone() })?;
        return recoverable(&data, &raw, &public);
    }
    let mechanism = match request.mechanism.as_deref() {
        Some("ecdsa") => Mechanism::Ecdsa,
        Some("eddsa") => Mechanism::Eddsa(EddsaParams::new(EddsaSignatureScheme::Pure)),
        other => return Err(format!("mechanism must be 'ecdsa', 'ecdsa-secp256k1' or 'eddsa', received {other:?}")),
    };
    let key = match keys.get(&request.label) {
        Some(key) => *key,
        None => {
            let key = find_one(session, ObjectClass::PRIVATE_KEY, &request.label)?;
            keys.insert(request.label.clone(), key);
            key
        }
    };
    session.sign(&mechanism, key, &data).map_err(|e| format!("C_Sign: {e}"))
}

fn answer(session: &Session, keys: &mut HashMap<String, ObjectHandle>, points: &mut HashMap<String, Vec<u8>>, line: &str) -> Value {
    let request: Request = match serde_json::from_str(line) {
        Ok(request) => request,
        Err(e) => return json!({ "id": null, "error": format!("bad request: {e}") }),
    };
    let result = match request.op.as_str() {
        "public-key" => public_key(session, &request.label).map(|key| json!({ "id": request.id, "publicKey": hex::encode(key) })),
        "sign" => sign(session, keys, points, &request).map(|sig| json!({ "id": request.id, "signature": hex::encode(sig) })),
        other => Err(format!("unknown op '{other}'")),
    };
    result.unwrap_or_else(|error| json!({ "id": request.id, "error": error }))
}

fn serve(pin_on_stdin: bool) -> Fallible<()> {
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let pin = if pin_on_stdin {
        let line = lines.next().ok_or("--pin-stdin: stdin ended before the PIN")?.map_err(|e| format!("stdin: {e}"))?;
        let pin = line.trim().to_string();
        if pin.is_empty() {
            return Err("--pin-stdin: the first line of stdin holds no PIN".to_string());
        }
        Some(pin)
    } else {
        None
    };
    let (_pkcs11, session) = open(pin)?;
    let mut keys = HashMap::new();
    let mut points = HashMap::new();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let write = |out: &mut std::io::StdoutLock, value: Value| -> Fallible<()> {
        writeln!(out, "{value}").and_then(|_| out.flush()).map_err(|e| format!("stdout: {e}"))
    };
    write(&mut out, json!({ "ready": true }))?;
    for line in lines {
        let line = line.map_err(|e| format!("stdin: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let response = answer(&session, &mut keys, &mut points, &line);
        write(&mut out, response)?;
    }
    Ok(())
}

fn generate(args: &[String]) -> Fallible<()> {
    let value = |flag: &str| -> Fallible<String> {
        args.iter()
            .position(|arg| arg == flag)
            .and_then(|at| args.get(at + 1).cloned())
            .ok_or_else(|| format!("generate needs {flag}"))
    };
    let label = value("--label")?;
    let (mechanism, params) = match value("--curve")?.as_str() {
        "secp256k1" => (Mechanism::EccKeyPairGen, SECP256K1_PARAMS),
        "ed25519" => (Mechanism::EccEdwardsKeyPairGen, ED25519_PARAMS),
        other => return Err(format!("--curve must be secp256k1 or ed25519, received '{other}'")),
    };
    let (_pkcs11, session) = open(None)?;
    if session
        .find_objects(&[Attribute::Label(label.as_bytes().to_vec())])
        .map_err(|e| format!("C_FindObjects: {e}"))?
        .len()
        > 0
    {
        return Err(format!("the token already holds objects labelled '{label}'"));
    }
    let id = label.as_bytes().to_vec();
    let public = [
        Attribute::Token(true),
        Attribute::Private(false),
        Attribute::Verify(true),
        Attribute::EcParams(params.to_vec()),
        Attribute::Label(label.as_bytes().to_vec()),
        Attribute::Id(id.clone()),
    ];
    let private = [
        Attribute::Token(true),
        Attribute::Private(true),
        Attribute::Sensitive(true),
        Attribute::Extractable(false),
        Attribute::Sign(true),
        Attribute::Label(label.as_bytes().to_vec()),
        Attribute::Id(id),
    ];
    session
        .generate_key_pair(&mechanism, &public, &private)
        .map_err(|e| format!("C_GenerateKeyPair: {e}"))?;
    println!("{}", hex::encode(public_key(&session, &label)?));
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("serve") => match &args[1..] {
            [] => serve(false),
            [flag] if flag == "--pin-stdin" => serve(true),
            other => Err(format!("serve takes only --pin-stdin, received {other:?}")),
        },
        Some("generate") => generate(&args[1..]),
        _ => Err("usage: relayer-pkcs11-signer serve [--pin-stdin] | generate --curve secp256k1|ed25519 --label L".to_string()),
    };
    if let Err(error) = result {
        eprintln!("relayer-pkcs11-signer: {error}");
        std::process::exit(1);
    }
}
