import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { childEnv, RUST_DIAGNOSTICS_ENV } from '../../config/child-env.ts';
import type { VerificationKeyJson } from '../../circuits/verification-key.ts';
import type { Groth16Proof } from '../solidity.ts';

export interface NativeProverOptions {
  /** Path of the `relayer-groth16` binary (see `NATIVE_PROVER_BINARY`). */
  binary: string;
  /** snarkjs Groth16 zkey to prove with. */
  zkey: string;
  /** rayon threads one proof may use (its FFTs and multi-exponentiations); default 1. */
  threads?: number;
  /**
   * snarkjs `verification_key.json` to verify with (`verify`; given to the binary as
   * RELAYER_GROTH16_VKEY). Without it, or with a binary built before it could verify, `verifies`
   * is false and `verify` is refused.
   */
  verificationKey?: string;
}

/** What the binary answers for one witness. */
export interface NativeProof {
  proof: Groth16Proof;
  publicSignals: string[];
  /** Time the binary spent proving, without the round trip. */
  proveMs: number;
}

/** The verification key the binary read from the zkey (snarkjs form, without `vk_alphabeta_12`). */
export interface NativeVerificationKey extends VerificationKeyJson {
  protocol: string;
  curve: string;
}

interface Pending { resolve(value: Record<string, unknown>): void; reject(error: Error): void }

/** Raised when the binary fails to start, dies, or answers a request with an error. */
export class NativeProverError extends Error {
  override name = 'NativeProverError';
}

/**
 * One long-lived `relayer-groth16` process: the zkey is parsed once, then each request is a line
 * of JSON on its stdin and each reply a line on its stdout. Requests may overlap; the binary
 * answers them in order. If the process dies, pending and later requests reject with
 * `NativeProverError` (`alive` turns false) and a new instance must be started.
 */
export class NativeProver {
  readonly threads: number;
  /** True when the process holds a prepared verification key (`verify` works). */
  verifies = false;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #stderr = '';
  #exited: Error | undefined;
  readonly #exit: Promise<void>;

  private constructor(child: ChildProcessWithoutNullStreams, threads: number, ready: Pending) {
    this.#child = child;
    this.threads = threads;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => { this.#stderr = (this.#stderr + chunk).slice(-4096); });
    let started = false;
    createInterface({ input: child.stdout }).on('line', (line) => {
      let reply: Record<string, unknown>;
      try {
        reply = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return this.#fail(new NativeProverError(`native prover wrote a line that is not JSON: ${line.slice(0, 200)}`));
      }
      if (!started) {
        started = true;
        return reply.ready === true ? ready.resolve(reply) : ready.reject(new NativeProverError(`native prover did not start: ${line}`));
      }
      const pending = this.#pending.get(reply.id as number);
      if (!pending) return;
      this.#pending.delete(reply.id as number);
      if (typeof reply.error === 'string') pending.reject(new NativeProverError(reply.error));
      else pending.resolve(reply);
    });
    this.#exit = new Promise((resolve) => {
      child.once('error', (error) => {
        this.#fail(new NativeProverError(`native prover could not run: ${error.message}`));
        ready.reject(this.#exited!);
        resolve();
      });
      child.once('close', (code, signal) => {
        this.#fail(new NativeProverError(`native prover exited (${signal ?? `code ${code}`})${this.#stderr ? `: ${this.#stderr.trim()}` : ''}`));
        ready.reject(this.#exited!);
        resolve();
      });
    });
    // An EPIPE on a dead child surfaces through 'close' above.
    child.stdin.on('error', () => {});
  }

  /** Starts the binary and resolves once it has parsed the zkey. */
  static async start({ binary, zkey, threads = 1, verificationKey }: NativeProverOptions): Promise<NativeProver> {
    if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`threads must be a positive integer, received '${threads}'`);
    const env = childEnv({ RELAYER_GROTH16_VKEY: verificationKey ?? '' }, { inherit: RUST_DIAGNOSTICS_ENV });
    const child = spawn(binary, ['--zkey', zkey, '--threads', String(threads)], { stdio: ['pipe', 'pipe', 'pipe'], env });
    let ready!: Pending;
    const started = new Promise<Record<string, unknown>>((resolve, reject) => { ready = { resolve, reject }; });
    const prover = new NativeProver(child, threads, ready);
    prover.verifies = (await started).verifier === true;
    return prover;
  }

  /** False once the process has exited or failed. */
  get alive(): boolean {
    return this.#exited === undefined;
  }

  /** Proves for a circom binary witness (`calculateWTNSBin`); rejects with `NativeProverError` if the binary refuses it. */
  async prove(wtns: Uint8Array): Promise<NativeProof> {
    const reply = await this.#request({ wtns: Buffer.from(wtns.buffer, wtns.byteOffset, wtns.byteLength).toString('base64') });
    return { proof: reply.proof as Groth16Proof, publicSignals: reply.publicSignals as string[], proveMs: reply.proveMs as number };
  }

  /**
   * Whether `proof` verifies for `publicSignals` under the `verificationKey` the process was
   * started with (prepared once; about a millisecond). Resolves false for a well-formed proof that
   * does not verify; rejects with `NativeProverError` for a malformed one (a coordinate off its
   * curve or not below the field's modulus, a G2 point outside the subgroup, a public signal not
   * below the scalar field's modulus, the wrong number of signals) or when `verifies` is false.
   */
  async verify(proof: Groth16Proof, publicSignals: readonly string[]): Promise<{ valid: boolean; verifyMs: number }> {
    if (!this.verifies) throw new NativeProverError('started without a verification key: no verify');
    const reply = await this.#request({ cmd: 'verify', proof, publicSignals });
    return { valid: reply.valid === true, verifyMs: reply.verifyMs as number };
  }

  /** The verification key as the binary read it from the zkey. */
  async verificationKey(): Promise<NativeVerificationKey> {
    const { id: _id, ...key } = await this.#request({ cmd: 'vk' });
    return key as unknown as NativeVerificationKey;
  }

  /** Closes the binary's stdin (it exits when its input ends) and waits for it; kills it after `graceMs`. */
  async close(graceMs = 2_000): Promise<void> {
    this.#child.stdin.end();
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), graceMs);
    await this.#exit;
    clearTimeout(timer);
  }

  #request(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.#exited) return Promise.reject(this.#exited);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#child.stdin.write(`${JSON.stringify({ id, ...body })}\n`);
    });
  }

  #fail(error: NativeProverError): void {
    this.#exited ??= error;
    for (const pending of this.#pending.values()) pending.reject(this.#exited);
    this.#pending.clear();
    if (this.#child.exitCode === null) this.#child.kill('SIGKILL');
  }
}
