import { join } from 'node:path';
import { BUILD_DIR, CIRCUIT_NAME } from './compile.ts';

/** Paths of the committed circuit artifacts, for the prover and the tests. */
export const artifacts = {
  r1cs: join(BUILD_DIR, `${CIRCUIT_NAME}.r1cs`),
  wasm: join(BUILD_DIR, `${CIRCUIT_NAME}.wasm`),
  /** circom's generated witness calculator, renamed .cjs because this package is ESM. */
  witnessCalculator: join(BUILD_DIR, 'witness_calculator.cjs'),
  zkey: join(BUILD_DIR, `${CIRCUIT_NAME}_final.zkey`),
  verificationKey: join(BUILD_DIR, 'verification_key.json'),
  verifierSol: join(BUILD_DIR, 'Verifier.sol'),
  manifest: join(BUILD_DIR, 'manifest.json'),
} as const;

/** What circuits/build/manifest.json records about a build (the dev ceremony's public facts). */
export interface BuildManifest {
  circuit: string;
  circom: string;
  constraints: number;
  publicInputs: number;
  ptauPower: number;
  /** sha256 (hex) of each committed file, keyed by file name. */
  sha256: Record<string, string>;
  ceremony: string;
}
