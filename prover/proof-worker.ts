/**
 * Piscina worker: one deposit-inclusion proof per task. Everything expensive happens once per
 * thread when this module loads: snarkjs, a single-threaded BN254 curve, the verification key,
 * circom's generated witness calculator over the compiled wasm, and the prover: the zkey in memory
 * for snarkjs, or this thread's own `relayer-groth16` process (which parses the zkey once) for the
 * native backend. A task then costs witness + prove + verify; every proof is verified against the
 * committed verification key: by the native process with its prepared key (native backend) or by
 * snarkjs (also when the binary was built before it could verify). Never throws for a bad input: it returns a typed failure, because an Error's
 * class does not survive the trip back to the main thread.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { workerData } from 'node:worker_threads';
import type { ProverBackend } from './backend.ts';
import { NativeProver } from './native/client.ts';
import type { Groth16Proof } from './solidity.ts';
import { expectedPublicSignals, type CircuitInput } from './proof-input.ts';

export interface ProofWorkerData {
  wasm: string;
  witnessCalculator: string;
  zkey: string;
  verificationKey: string;
  /** Default snarkjs. */
  backend?: ProverBackend;
  /** The native binary and its rayon threads per proof (backend `native`). */
  native?: { binary: string; threads: number };
}

export type ProofTaskResult =
  | { ok: true; proof: Groth16Proof; publicSignals: string[]; witnessMs: number; proveMs: number; verifyMs: number }
  | { ok: false; reason: 'invalid_input'; message: string }
  | { ok: false; reason: 'verification_failed'; message: string };

interface WitnessCalculator { calculateWTNSBin(input: CircuitInput, sanityCheck: boolean): Promise<Uint8Array> }
type WitnessCalculatorBuilder = (code: Uint8Array, options?: object) => Promise<WitnessCalculator>;

const require = createRequire(import.meta.url);
const paths = workerData as ProofWorkerData;

// ffjavascript (through web-worker) decides at import time whether this thread is one of ITS
// workers by reading worker_threads.isMainThread; in a Piscina thread it would then take over
// the parent port. Pretend to be the main thread while snarkjs loads, then restore the flag.
const threads = require('node:worker_threads') as { isMainThread: boolean };
const wasMainThread = threads.isMainThread;
threads.isMainThread = true;
const snarkjs = await import('snarkjs');
threads.isMainThread = wasMainThread;

// One single-threaded curve for the life of the thread: the pool is the parallelism. snarkjs asks
// for the multi-threaded curve, which ffjavascript caches in globalThis.curve_bn128 (per thread),
// so placing ours there makes every prove and verify reuse it.
const curve = await snarkjs.curves.getCurveFromName('bn128', { singleThread: true });
(globalThis as { curve_bn128?: unknown }).curve_bn128 = curve;

const backend = paths.backend ?? 'snarkjs';
const zkey = backend === 'snarkjs' ? { type: 'mem' as const, data: new Uint8Array(readFileSync(paths.zkey)) } : undefined;
const startNative = () => NativeProver.start({
  binary: paths.native!.binary, zkey: paths.zkey, threads: paths.native!.threads, verificationKey: paths.verificationKey,
});
let native = backend === 'native' ? await startNative() : undefined;
const verificationKey = JSON.parse(readFileSync(paths.verificationKey, 'utf8')) as object;
const buildWitnessCalculator = require(paths.witnessCalculator) as WitnessCalculatorBuilder;
const witnessCalculator = await buildWitnessCalculator(readFileSync(paths.wasm));

/** Proves one circuit input, verifies the proof with the verification key, and reports phase timings. */
export default async function prove(input: CircuitInput): Promise<ProofTaskResult> {
  const started = performance.now();
  let witness: Uint8Array;
  try {
    witness = await witnessCalculator.calculateWTNSBin(input, true);
  } catch (error) {
    // circom's calculator throws on a failed `===` (wrong path, root, nullifier) or a malformed input.
    return { ok: false, reason: 'invalid_input', message: String((error as Error)?.message ?? error).split('\n')[0]! };
  }
  const witnessDone = performance.now();
  // A native process that died (killed, crashed) is replaced on the next proof.
  if (native && !native.alive) native = await startNative();
  const { proof, publicSignals } = native ? await native.prove(witness) : await snarkjs.groth16.prove(zkey!, { type: 'mem', data: witness });
  const proveDone = performance.now();
  // Natively with the prepared key when the native process runs (about 1 ms, snarkjs about 8).
  const valid = native?.verifies ? await verifiedNatively(native, proof, publicSignals) : await snarkjs.groth16.verify(verificationKey, publicSignals, proof);
  const expected = expectedPublicSignals(input).map((s) => BigInt(s).toString());
  if (!valid || publicSignals.some((s, i) => s !== expected[i])) {
    return { ok: false, reason: 'verification_failed', message: valid ? 'public signals differ from the input' : 'proof does not verify' };
  }
  return {
    ok: true,
    proof,
    publicSignals,
    witnessMs: witnessDone - started,
    proveMs: proveDone - witnessDone,
    verifyMs: performance.now() - proveDone,
  };
}

/** The native verdict; a proof it cannot even read (an error, not a verdict) does not verify. */
async function verifiedNatively(prover: NativeProver, proof: Groth16Proof, publicSignals: string[]): Promise<boolean> {
  try {
    return (await prover.verify(proof, publicSignals)).valid;
  } catch (error) {
    if (!prover.alive) throw error; // the process died: a failure of the prover, not of the proof
    return false;
  }
}

/** A no-op task: resolving it proves this thread has finished loading (see `ProverPool.ready`). */
export function warm(): boolean {
  return true;
}
