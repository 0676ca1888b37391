import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { childEnv, RUST_DIAGNOSTICS_ENV } from '../../config/child-env.ts';
import { STELLAR_DEVNET_BINARY } from './build.ts';

/** The local network's passphrase (stellar-core's standalone network). */
export const STELLAR_DEVNET_PASSPHRASE = 'Standalone Network ; February 2017';

export interface StellarNodeOptions {
  /** Port; 0 (default) for a free one. */
  port?: number;
  /** Keeps the ledger across restarts; unset: a fresh network in a temporary directory is NOT made, state lives in memory only. */
  dataDir?: string;
  /** Milliseconds between ledger closes (default 1000; tests use less). */
  ledgerMs?: number;
  binary?: string;
}

/** A running stellar-devnet process. */
export interface StellarNode {
  rpcUrl: string;
  networkPassphrase: string;
  /** Moves ledger time forward by `seconds` and closes a ledger at the new time (for the timeouts). */
  increaseTime(seconds: number): Promise<{ sequence: number; closeTime: number }>;
  /** Closes a ledger now. */
  closeLedger(): Promise<{ sequence: number; closeTime: number }>;
  stop(): Promise<void>;
}

/** Calls a JSON-RPC method of the devnet (its own `devnet_*` methods included); throws its error message. */
export async function devnetRpc<T>(rpcUrl: string, method: string, params: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { code: number; message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message} (${body.error.code})`);
  return body.result as T;
}

/**
 * Starts `stellar-devnet` (built by `buildStellarDevnet`) and resolves once it listens (it prints
 * one JSON line with its URL). Rejects with its stderr when it exits first.
 */
export async function startStellarNode(options: StellarNodeOptions = {}): Promise<StellarNode> {
  const args = ['--port', String(options.port ?? 0), '--ledger-ms', String(options.ledgerMs ?? 1000), '--passphrase', STELLAR_DEVNET_PASSPHRASE];
  if (options.dataDir) args.push('--data-dir', options.dataDir);
  // Its own settings are its arguments: of this environment it gets the base set and its debug switch only.
  const env = childEnv({}, { inherit: [...RUST_DIAGNOSTICS_ENV, 'STELLAR_DEVNET_DEBUG'] });
  const child: ChildProcess = spawn(options.binary ?? STELLAR_DEVNET_BINARY, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
    if (process.env.STELLAR_DEVNET_DEBUG) process.stderr.write(chunk);
  });
  const ready = await new Promise<{ rpcUrl: string; networkPassphrase: string }>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      try {
        resolve(JSON.parse(line));
      } catch {
        reject(new Error(`stellar-devnet printed '${line}' instead of its address`));
      }
    });
    child.once('error', (error) => reject(new Error(`stellar-devnet could not start: ${error.message} (run buildStellarDevnet first)`)));
    child.once('exit', (code) => reject(new Error(`stellar-devnet exited with ${code}: ${stderr}`)));
  });
  child.stdout!.resume();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = (result: { sequence: number; closeTime: string }) => ({ sequence: result.sequence, closeTime: Number(result.closeTime) });
  return {
    rpcUrl: ready.rpcUrl,
    networkPassphrase: ready.networkPassphrase,
    increaseTime: async (seconds) => close(await devnetRpc(ready.rpcUrl, 'devnet_increaseTime', { seconds })),
    closeLedger: async () => close(await devnetRpc(ready.rpcUrl, 'devnet_closeLedger')),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // devnet_stop saves the ledger (the latest empty ledgers included) and exits; a signal if it cannot answer.
      await devnetRpc(ready.rpcUrl, 'devnet_stop').catch(() => child.kill('SIGTERM'));
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
