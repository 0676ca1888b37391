import { z } from 'zod';
import { booleanFromEnv, defineConcern, intFromEnv } from './define.ts';

/** Proving: the proof pool and the proving key a production process trusts. */
export const proverSettings = defineConcern({
  name: 'prover',
  schema: z.object({
    /** Worker threads in the proof pool (default: number of CPUs). */
    PROVER_POOL_SIZE: intFromEnv(1, 256).optional(),
    /** Proofs that may wait for a worker; beyond this, callers get a "prover busy" error. */
    PROVER_QUEUE_MAX: intFromEnv(0, 100_000).default(256),
    /**
     * What proves: `native` (the Rust prover of prover/native/, built by `npm run build:native`),
     * `snarkjs`, or `auto`: native when built, else snarkjs. Logged at start-up.
     */
    PROVER_BACKEND: z.enum(['auto', 'native', 'snarkjs']).default('auto'),
    /** rayon threads one native proof may use (measured on 2 cores: 1, the pool is the parallelism). */
    PROVER_NATIVE_THREADS: intFromEnv(1, 256).default(1),
    /**
     * sha256 (hex) of the verification key of the proving key this deployment trusts: `sha256sum
     * circuits/build/verification_key.json`, also manifest.json's `ceremony.vkSha256`. Required in
     * production by the processes that prove or sign unlocks (api, worker, prover; not migrate): they
     * exit 78 naming the proving key unless its verification key hashes to this, and check that every
     * registered chain's deployed verifier is that key's (prover/proving-key-trust.ts).
     */
    PROVING_KEY_VK_SHA256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex digits (sha256sum circuits/build/verification_key.json)').optional(),
    /**
     * `true` lets a production-mode process prove with a key whose ceremony does not verify (a
     * development key, which has no transcript; logged at every start, with the reason). For
     * production-mode test stacks only: whoever ran a development ceremony can forge proofs. Default
     * `false`: production refuses such a key (exit 78).
     */
    PROVING_KEY_ALLOW_DEVELOPMENT: booleanFromEnv('false'),
    /**
     * Path of the phase-1 file (powers of tau) the proving key's ceremony transcript pins by sha256.
     * Required in production by the processes that prove or sign unlocks: they verify the key against
     * its transcript (circuits/build/ceremony-transcript.json), r1cs and this file before trusting it.
     */
    PROVING_KEY_PTAU: z.string().min(1).optional(),
    /**
     * Directory of the ceremony verdicts (one file per verified (zkey, transcript, r1cs, phase 1),
     * keyed by their sha256s), so a full verification runs once per key rather than at every start.
     * Used only when it and every directory above it can be written by no one but this process's
     * user (and root); otherwise every start verifies in full. Default DATA_DIR/proving-key-verdicts.
     */
    PROVING_KEY_VERDICT_DIR: z.string().min(1).optional(),
    /**
     * Distinct contributors a finished ceremony needs before its beacon: what `npm run ceremony --
     * verify --final` and production's check of the proving key require.
     */
    CEREMONY_MIN_CONTRIBUTORS: intFromEnv(1, 1000).default(2),
  }),
});
