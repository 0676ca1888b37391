import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { StrKey } from '@stellar/stellar-sdk';
import { computeAddress } from 'ethers';
import { childEnv, RUST_DIAGNOSTICS_ENV } from '../../config/child-env.ts';
import type { RelayerSigner } from '../signers.ts';

/** Where `npm run build:signer` puts the PKCS#11 signer (Cargo profile `devnet`, target directory `target/`). */
export const PKCS11_SIGNER_BINARY = fileURLToPath(new URL('../../target/devnet/relayer-pkcs11-signer', import.meta.url));

/** The token and the keys in it (config PKCS11_*). */
export interface Pkcs11Settings {
  /** Path of the token's PKCS#11 library (SoftHSM2: /usr/lib/softhsm/libsofthsm2.so). */
  module: string;
  tokenLabel: string;
  /** The user PIN, or `pinFile` (its first line). */
  pin?: string;
  pinFile?: string;
  evmKeyLabel: string;
  stellarKeyLabel: string;
  /** The signer binary; `PKCS11_SIGNER_BINARY` by default. */
  binary?: string;
}

/**
 * What the signer child takes from this environment besides the base set: HOME and the module's own
 * configuration (SoftHSM2 finds its tokens through SOFTHSM2_CONF). Its PIN comes on its stdin.
 */
const MODULE_ENV = ['HOME', 'SOFTHSM2_CONF', ...RUST_DIAGNOSTICS_ENV] as const;

interface Pending {
  resolve(value: Record<string, string>): void;
  reject(error: Error): void;
}

/** The running child: requests in flight by id. */
interface Child {
  process: ChildProcessWithoutNullStreams;
  ready: Promise<void>;
  pending: Map<number, Pending>;
}

/**
 * A relayer signer whose keys live in a PKCS#11 token (a hardware security module, or SoftHSM2 in
 * tests). The calls are made by `relayer-pkcs11-signer` (chains/signer/pkcs11, Rust, `cryptoki`),
 * started as a child process on first use and kept: one JSON request per line on its stdin, one
 * answer per line on its stdout. secp256k1: CKM_ECDSA gives (r, s); the child makes s low and finds
 * the recovery id whose recovered key is the token's (natively, `k256`: in JavaScript the two
 * recoveries cost 30 times the signature itself). Ed25519: CKM_EDDSA. The
 * private keys never leave the token. A child that dies fails the requests in flight and is
 * started again by the next one.
 */
export function createPkcs11Signer(settings: Pkcs11Settings): RelayerSigner {
  const binary = settings.binary ?? PKCS11_SIGNER_BINARY;
  let child: Child | undefined;
  let nextId = 1;
  let evmAddress: Promise<string> | undefined;
  let stellarKey: Promise<string> | undefined;

  const startChild = (): Child => {
    if (!existsSync(binary)) throw new Error(`the PKCS#11 signer is not built (${binary}): run npm run build:signer`);
    const pin = settings.pin ?? readFileSync(settings.pinFile ?? '', 'utf8').split(/\r?\n/)[0]!.trim();
    const env = childEnv({ PKCS11_MODULE: settings.module, PKCS11_TOKEN_LABEL: settings.tokenLabel }, { inherit: MODULE_ENV });
    const proc = spawn(binary, ['serve', '--pin-stdin'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    // The PIN is the first line of its input, never in its environment (/proc/<pid>/environ) or arguments.
    proc.stdin.on('error', () => {}); // an EPIPE from a child that died surfaces through its 'exit'
    proc.stdin.write(`${pin}\n`);
    const pending = new Map<number, Pending>();
    let stderr = '';
    let signalReady: () => void = () => {};
    let failReady: (error: Error) => void = () => {};
    const ready = new Promise<void>((resolve, reject) => [signalReady, failReady] = [resolve, reject]);
    ready.catch(() => {});
    proc.stderr.setEncoding('utf8').on('data', (text: string) => { stderr = (stderr + text).slice(-4_000); });
    createInterface({ input: proc.stdout }).on('line', (line) => {
      const message = JSON.parse(line) as Record<string, string> & { id?: number; ready?: boolean };
      if (message.ready) return signalReady();
      const waiter = pending.get(Number(message.id));
      if (!waiter) return;
      pending.delete(Number(message.id));
      // An idle child must not keep this process alive (it ends itself when its stdin closes).
      if (pending.size === 0) holdOpen(proc, false);
      if (message.error) waiter.reject(new Error(`PKCS#11 signer: ${message.error}`));
      else waiter.resolve(message);
    });
    const died = (reason: string) => {
      const error = new Error(`PKCS#11 signer ${reason}${stderr ? `: ${stderr.trim()}` : ''}`);
      failReady(error);
      for (const waiter of pending.values()) waiter.reject(error);
      pending.clear();
      if (child?.process === proc) child = undefined;
    };
    proc.on('error', (error) => died(`could not start (${error.message})`));
    proc.on('exit', (code, signal) => died(`exited (${signal ?? `code ${code}`})`));
    holdOpen(proc, true);
    ready.then(() => holdOpen(proc, false), () => {});
    return { process: proc, ready, pending };
  };

  const call = async (request: Record<string, string>): Promise<Record<string, string>> => {
    child ??= startChild();
    const current = child;
    await current.ready;
    const id = nextId++;
    return new Promise((resolve, reject) => {
      current.pending.set(id, { resolve, reject });
      holdOpen(current.process, true);
      current.process.stdin.write(`${JSON.stringify({ id, ...request })}\n`);
    });
  };

  const publicKey = async (label: string): Promise<Buffer> =>
    Buffer.from((await call({ op: 'public-key', label })).publicKey!, 'hex');

  const address = (): Promise<string> => {
    evmAddress ??= publicKey(settings.evmKeyLabel).then((point) => {
      if (point.length !== 65 || point[0] !== 4) {
        throw new Error(`PKCS#11 key '${settings.evmKeyLabel}' is not an uncompressed secp256k1 point ` +
          `(${point.length} bytes)`);
      }
      return computeAddress(`0x${point.toString('hex')}`);
    });
    evmAddress.catch(() => { evmAddress = undefined; });
    return evmAddress;
  };

  return {
    backend: 'pkcs11',
    evmAddress: address,
    async signEvmDigest(digest) {
      if (!/^0x[0-9a-fA-F]{64}$/.test(digest)) throw new RangeError(`an EVM digest is 0x and 32 bytes of hex, received '${digest}'`);
      const answer = await call({ op: 'sign', label: settings.evmKeyLabel, mechanism: 'ecdsa-secp256k1', data: digest.slice(2) });
      return `0x${answer.signature!}`;
    },
    stellarPublicKey() {
      stellarKey ??= publicKey(settings.stellarKeyLabel).then((key) => {
        if (key.length !== 32) throw new Error(`PKCS#11 key '${settings.stellarKeyLabel}' is not an Ed25519 public key (${key.length} bytes)`);
        return StrKey.encodeEd25519PublicKey(key);
      });
      stellarKey.catch(() => { stellarKey = undefined; });
      return stellarKey;
    },
    async signStellar(hash) {
      const answer = await call({ op: 'sign', label: settings.stellarKeyLabel, mechanism: 'eddsa', data: hash.toString('hex') });
      return Buffer.from(answer.signature!, 'hex');
    },
    async close() {
      const current = child;
      child = undefined;
      if (!current) return;
      const exited = new Promise((resolve) => current.process.once('exit', resolve));
      current.process.stdin.end();
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
      if (current.process.exitCode === null) current.process.kill();
    },
  };
}

/** Whether the child and its pipes keep Node's event loop alive: while requests are in flight only. */
function holdOpen(proc: ChildProcessWithoutNullStreams, hold: boolean): void {
  for (const handle of [proc, proc.stdin, proc.stdout, proc.stderr] as unknown as { ref?(): void; unref?(): void }[]) {
    if (hold) handle.ref?.();
    else handle.unref?.();
  }
}

