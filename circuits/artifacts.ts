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
  /** The ceremony's transcript, when the committed zkey comes from `npm run ceremony` (multi-party). */
  transcript: join(BUILD_DIR, 'ceremony-transcript.json'),
} as const;

/** How the committed zkey's randomness was made: what production start-up reads (prover/proving-key-trust.ts). */
export type CeremonyFacts =
  | {
    /** One machine made all the randomness: whoever ran it can forge proofs. Refused in production. */
    kind: 'development';
    description: string;
    /** sha256 of verification_key.json (the value of PROVING_KEY_VK_SHA256 for this key). */
    vkSha256: string;
  }
  | {
    /** `npm run ceremony`: contributions by independent parties, closed by a public beacon. */
    kind: 'multi-party';
    /** The contributors in order (the beacon excluded). */
    participants: { name: string; contributionHash: string }[];
    beacon: { hash: string; iterationsExp: number; contributionHash: string };
    vkSha256: string;
    /** The phase-1 file the ceremony started from. */
    phase1: { source: string; sha256: string; power: number };
    /** The transcript's file name beside the manifest. */
    transcript: string;
  };

/** What circuits/build/manifest.json records about a build (the dev ceremony's public facts). */
export interface BuildManifest {
  circuit: string;
  circom: string;
  constraints: number;
  publicInputs: number;
  ptauPower: number;
  /** sha256 (hex) of each committed file, keyed by file name. */
  sha256: Record<string, string>;
  ceremony: CeremonyFacts;
}
