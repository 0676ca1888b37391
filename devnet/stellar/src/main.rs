//! stellar-devnet: a local Soroban network on the real Soroban host, speaking the Stellar RPC.
//! See devnet/stellar/README.md for what it does and what it does not.

mod apply;
mod config;
mod node;
mod rpc;
mod state;

use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Command-line settings.
struct Args {
    host: String,
    port: u16,
    data_dir: Option<PathBuf>,
    ledger_ms: u64,
    passphrase: String,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        host: "127.0.0.1".into(),
        port: 8000,
        data_dir: None,
        ledger_ms: 1000,
        passphrase: "Standalone Network ; February 2017".into(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--host" => args.host = value()?,
            "--port" => args.port = value()?.parse().map_err(|_| "--port: not a port".to_string())?,
            "--data-dir" => args.data_dir = Some(PathBuf::from(value()?)),
            "--ledger-ms" => args.ledger_ms = value()?.parse().map_err(|_| "--ledger-ms: not a number".to_string())?,
            "--passphrase" => args.passphrase = value()?,
            "--help" | "-h" => {
                println!("stellar-devnet [--host 127.0.0.1] [--port 8000] [--data-dir DIR] [--ledger-ms 1000] [--passphrase TEXT]");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if args.ledger_ms == 0 {
        return Err("--ledger-ms must be positive".into());
    }
    Ok(args)
}

fn main() {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("stellar-devnet: {message}");
            std::process::exit(2);
        }
    };
    if let Some(dir) = &args.data_dir {
        if let Err(error) = std::fs::create_dir_all(dir) {
            eprintln!("stellar-devnet: cannot create {}: {error}", dir.display());
            std::process::exit(1);
        }
    }
    let mut node = match node::Node::start(&args.passphrase, args.data_dir.clone()) {
        Ok(node) => node,
        Err(message) => {
            eprintln!("stellar-devnet: {message}");
            std::process::exit(1);
        }
    };
    let server = match tiny_http::Server::http((args.host.as_str(), args.port)) {
        Ok(server) => server,
        Err(error) => {
            eprintln!("stellar-devnet: cannot listen on {}:{}: {error}", args.host, args.port);
            std::process::exit(1);
        }
    };
    let port = server.server_addr().to_ip().map(|addr| addr.port()).unwrap_or(args.port);
    // One line for launchers: they wait for it, then read the URL.
    println!(
        "{}",
        serde_json::json!({
            "rpcUrl": format!("http://{}:{port}", args.host),
            "networkPassphrase": args.passphrase,
            "latestLedger": node.ledger.latest().sequence,
        })
    );
    let period = Duration::from_millis(args.ledger_ms);
    let mut next_close = Instant::now() + period;
    loop {
        let wait = next_close.saturating_duration_since(Instant::now());
        match server.recv_timeout(wait) {
            Ok(Some(request)) => {
                rpc::handle(&mut node, request);
                if node.stopping {
                    std::process::exit(0);
                }
            }
            Ok(None) => {}
            Err(error) => eprintln!("stellar-devnet: accept failed: {error}"),
        }
        // Close times rise by at least a second per ledger, as on Stellar: with a short period a
        // ledger waits for the clock's next second instead of running ahead of it.
        if Instant::now() >= next_close && node.clock_time() > node.ledger.latest().close_time {
            node.close_ledger();
            next_close = Instant::now() + period;
        }
    }
}
