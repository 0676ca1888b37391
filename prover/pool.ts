import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { Registry } from 'prom-client';
import { artifacts } from '../circuits/artifacts.ts';
import { resolveProverBackend, type ProverBackend, type ProverBackendChoice } from './backend.ts';
import { InvalidProofInputError, ProofVerificationError, ProverBusyError, ProverClosedError } from './errors.ts';
import { proverMetrics, type ProverMetrics } from './metrics.ts';
import type { CircuitInput } from './proof-input.ts';
import type { ProofTaskResult, ProofWorkerData } from './proof-worker.ts';
import type { Groth16Proof } from './solidity.ts';
import { inSpan } from '../telemetry/spans.ts';

/** A pool's size when none is given: one thread per CPU the process may use. */
export function defaultProverPoolSize(): number {
  return availableParallelism();
}

export interface ProverPoolOptions {
  /** Worker threads (`PROVER_POOL_SIZE`); default: the CPU count. */
  size?: number;
  /** Proofs that may wait for a worker (`PROVER_QUEUE_MAX`); beyond it `prove` throws `ProverBusyError`. Default 256. */
  maxQueue?: number;
  /** Where the metrics go; default: prom-client's global registry. */
  registry?: Registry;
  /** Circuit artifacts; default: the committed ones in circuits/build/. */
  artifacts?: Pick<ProofWorkerData, 'wasm' | 'witnessCalculator' | 'zkey' | 'verificationKey'>;
  /** `PROVER_BACKEND`: `auto` (default: native when built, else snarkjs), `native` or `snarkjs`. */
  backend?: ProverBackendChoice;
  /** `PROVER_NATIVE_THREADS`: rayon threads per native proof; default 1 (the pool is the parallelism). */
  nativeThreads?: number;
  /** The native binary; default the one `npm run build:native` builds. */
  nativeBinary?: string;
}

/** A verified proof, its public signals `[root, orderHashHi, orderHashLo, nullifierHash]`, what proved it and where the time went. */
export interface ProofResult {
  proof: Groth16Proof;
  /** The backend that produced it (a pool's is fixed; a moved pool's new proofs are the new backend's). */
  backend: ProverBackend;
  publicSignals: string[];
  timings: { witnessMs: number; proveMs: number; verifyMs: number };
}

const WORKER_FILE = new URL('./proof-worker.mjs', import.meta.url).href;

/**
 * A pool of worker threads producing deposit-inclusion proofs off the event loop. Each thread
 * keeps the witness calculator, snarkjs with a single-threaded curve, and its prover loaded (the
 * zkey for snarkjs, or its own native prover process); each proof is verified with snarkjs before
 * `prove` resolves. Waiting work is bounded (`maxQueue`). Throws `NativeProverUnavailableError`
 * when `backend: 'native'` is asked for and the binary is not built.
 */
export class ProverPool {
  readonly size: number;
  readonly maxQueue: number;
  /** The backend in use and why it was chosen (log it at start). */
  readonly backend: ProverBackend;
  readonly backendReason: string;
  readonly #piscina: Piscina<CircuitInput, ProofTaskResult>;
  readonly #metrics: ProverMetrics;
  #outstanding = 0;
  /** Proofs handed to the threads and not settled yet: a draining close waits for them. */
  readonly #running = new Set<Promise<unknown>>();
  #closing: Promise<void> | undefined;

  constructor(options: ProverPoolOptions = {}) {
    this.size = options.size ?? defaultProverPoolSize();
    this.maxQueue = options.maxQueue ?? 256;
    const resolved = resolveProverBackend(options.backend, options.nativeBinary);
    this.backend = resolved.backend;
    this.backendReason = resolved.reason;
    const workerData: ProofWorkerData = {
      ...(options.artifacts ?? {
        wasm: artifacts.wasm,
        witnessCalculator: artifacts.witnessCalculator,
        zkey: artifacts.zkey,
        verificationKey: artifacts.verificationKey,
      }),
      backend: resolved.backend,
      native: resolved.binary ? { binary: resolved.binary, threads: options.nativeThreads ?? 1 } : undefined,
    };
    this.#piscina = new Piscina({
      filename: WORKER_FILE,
      minThreads: this.size,
      maxThreads: this.size,
      maxQueue: this.maxQueue,
      concurrentTasksPerWorker: 1,
      // Loading a thread costs about a second (snarkjs, curve, zkey, native process): never let one go idle-dead.
      idleTimeout: Number.POSITIVE_INFINITY,
      workerData,
    });
    this.#metrics = proverMetrics(options.registry);
    this.#metrics.sources.add(this);
  }

  /** Proofs waiting for a free worker. */
  get queueDepth(): number {
    return this.#piscina.queueSize;
  }

  /** Threads proving right now. */
  get busyWorkers(): number {
    return Math.max(0, Math.min(this.size, this.#outstanding - this.#piscina.queueSize));
  }

  /** Resolves once every thread has loaded its artifacts, so the first proofs do not pay for it. */
  async ready(): Promise<void> {
    await Promise.all(Array.from({ length: this.size }, () => this.#piscina.run(null as never, { name: 'warm' })));
  }

  /**
   * Proves `input` (see `buildProofInput`) and verifies the proof. Throws `ProverBusyError` when
   * the queue is full, `InvalidProofInputError` when the circuit rejects the input (wrong path,
   * root or nullifier), `ProverClosedError` after `close`, `ProofVerificationError` if the artifacts
   * are broken.
   */
  prove(input: CircuitInput): Promise<ProofResult> {
    // The proof's span: a child of the activity or job that asked for it (telemetry/; nothing with tracing off).
    return inSpan('proof', { attributes: { 'prover.threads': this.size } }, () => this.#prove(input));
  }

  async #prove(input: CircuitInput): Promise<ProofResult> {
    const { proofs } = this.#metrics;
    if (this.#closing) {
      proofs.inc({ result: 'closed' });
      throw new ProverClosedError();
    }
    this.#outstanding++;
    let result: ProofTaskResult;
    try {
      // Refused here rather than by the pool, so the refusal is known by the queue's state, not by the pool's wording.
      if (this.#piscina.queueSize >= this.maxQueue) throw new ProverBusyError(this.maxQueue);
      const run = this.#piscina.run(input);
      this.#running.add(run);
      try {
        result = await run;
      } finally {
        this.#running.delete(run);
      }
    } catch (error) {
      const mapped = this.#mapPoolError(error);
      proofs.inc({ result: mapped instanceof ProverBusyError ? 'busy' : mapped instanceof ProverClosedError ? 'closed' : 'error' });
      throw mapped;
    } finally {
      this.#outstanding--;
    }
    if (!result.ok) {
      proofs.inc({ result: result.reason });
      throw result.reason === 'invalid_input' ? new InvalidProofInputError(result.message) : new ProofVerificationError(result.message);
    }
    proofs.inc({ result: 'ok' });
    this.#metrics.witnessSeconds.observe(result.witnessMs / 1000);
    this.#metrics.proveSeconds.observe(result.proveMs / 1000);
    this.#metrics.verifySeconds.observe(result.verifyMs / 1000);
    return {
      proof: result.proof,
      backend: this.backend,
      publicSignals: result.publicSignals,
      timings: { witnessMs: result.witnessMs, proveMs: result.proveMs, verifyMs: result.verifyMs },
    };
  }

  /**
   * Stops accepting proofs, then either lets queued and running proofs finish (`drain`, the
   * default) or rejects them with `ProverClosedError`, and terminates every thread (and with it
   * its curve and wasm memory), so nothing keeps the process alive. Idempotent.
   */
  close({ drain = true }: { drain?: boolean } = {}): Promise<void> {
    this.#closing ??= (async () => {
      try {
        // Piscina's close() gives queued and running tasks 30 s, then terminates them: on a loaded
        // machine a queue of proofs takes longer, so the proofs accepted are waited for here first.
        // destroy() terminates the threads at once, rejecting whatever they were doing.
        if (drain) {
          await Promise.allSettled([...this.#running]);
          await this.#piscina.close();
        }
      } finally {
        await this.#piscina.destroy();
        this.#metrics.sources.delete(this);
      }
    })();
    return this.#closing;
  }

  /**
   * What a failed run means, told by the pool's state, never by the wording of its error: a pool
   * closing abandoned the proof, a full queue refused it; anything else is the error itself.
   */
  #mapPoolError(error: unknown): Error {
    if (error instanceof ProverBusyError || error instanceof ProverClosedError) return error;
    const message = (error as Error)?.message ?? String(error);
    if (this.#closing) return new ProverClosedError(`proof abandoned: ${message}`);
    if (this.#piscina.queueSize >= this.maxQueue) return new ProverBusyError(this.maxQueue);
    return error instanceof Error ? error : new Error(message);
  }
}
