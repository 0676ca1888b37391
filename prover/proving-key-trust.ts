import { join, relative } from 'node:path';
import type { Logger } from 'pino';
import * as snarkjs from 'snarkjs';
import { artifacts } from '../circuits/artifacts.ts';
import { CeremonyError } from '../circuits/ceremony/transcript.ts';
import { verificationKeySha256, type VerificationKeyJson } from '../circuits/verification-key.ts';
import { ConfigError, type Config } from '../config/config.ts';
import { checkCeremonyEvidence } from './ceremony-evidence.ts';

export type { VerificationKeyJson };

/** The proving key a process will prove with, checked: its verification key and that key's sha256. */
export interface TrustedProvingKey {
  zkey: string;
  verificationKey: VerificationKeyJson;
  vkSha256: string;
}

/** The files production's check reads (circuits/build's by default). */
export interface ProvingKeyFiles {
  zkey: string;
  /** The ceremony's transcript beside the zkey (`npm run ceremony -- finalize` writes it). */
  transcript: string;
  r1cs: string;
}

/** Runs `work` and terminates snarkjs's curve after, unless this thread already had one (someone else's, still in use). */
async function withOwnCurve<T>(work: () => Promise<T>): Promise<T> {
  const holder = globalThis as { curve_bn128?: { terminate(): Promise<void> } | null };
  const hadCurve = Boolean(holder.curve_bn128);
  try {
    return await work();
  } finally {
    if (!hadCurve) await holder.curve_bn128?.terminate();
  }
}

/**
 * The verification key inside a zkey. snarkjs builds its multi-threaded curve for this; the curve
 * is terminated after unless this thread already had one, or the process would never exit.
 */
export function verificationKeyOf(zkey: string): Promise<VerificationKeyJson> {
  return withOwnCurve(async () => (await snarkjs.zKey.exportVerificationKey(zkey)) as VerificationKeyJson);
}

/**
 * Production's refusal of a proving key it cannot trust (a process that proves or signs unlocks
 * calls it before it starts anything). With NODE_ENV=production it throws `ConfigError` (the
 * process exits 78) naming the proving key when the zkey's verification key does not hash to
 * PROVING_KEY_VK_SHA256, or when the key's ceremony does not verify from evidence: its transcript
 * (missing, broken, unclosed, too few contributors, a contribution that changes nothing), the r1cs
 * and the phase-1 file PROVING_KEY_PTAU all checked as `npm run ceremony -- verify --final` does,
 * whatever manifest.json says. PROVING_KEY_ALLOW_DEVELOPMENT (production-mode test stacks) turns
 * the ceremony refusal into a logged warning. Resolves with the checked key; outside production
 * with undefined (nothing read: development runs prove with whatever key is built).
 */
export async function checkProvingKey(
  config: Pick<Config, 'NODE_ENV' | 'PROVING_KEY_VK_SHA256' | 'PROVING_KEY_ALLOW_DEVELOPMENT' | 'PROVING_KEY_PTAU'
    | 'PROVING_KEY_VERDICT_DIR' | 'CEREMONY_MIN_CONTRIBUTORS' | 'DATA_DIR'>,
  logger: Logger,
  files: ProvingKeyFiles = { zkey: artifacts.zkey, transcript: artifacts.transcript, r1cs: artifacts.r1cs },
): Promise<TrustedProvingKey | undefined> {
  if (config.NODE_ENV !== 'production') return undefined;
  const name = relative(process.cwd(), files.zkey) || files.zkey;
  if (config.PROVING_KEY_VK_SHA256 === undefined) {
    throw new ConfigError(`PROVING_KEY_VK_SHA256: required in production by a process that proves or signs unlocks: ` +
      `the sha256 of the verification key of the proving key ${name} it may use (what \`npm run ceremony -- finalize\` printed)`);
  }
  let verificationKey: VerificationKeyJson;
  try {
    verificationKey = await verificationKeyOf(files.zkey);
  } catch (error) {
    throw new ConfigError(`proving key ${name} cannot be read: ${(error as Error).message}`);
  }
  const vkSha256 = verificationKeySha256(verificationKey);
  if (vkSha256 !== config.PROVING_KEY_VK_SHA256) {
    throw new ConfigError(`proving key ${name}: its verification key hashes to ${vkSha256}, not ` +
      `PROVING_KEY_VK_SHA256 ${config.PROVING_KEY_VK_SHA256}`);
  }

  const check = {
    minContributors: config.CEREMONY_MIN_CONTRIBUTORS,
    verdictDir: config.PROVING_KEY_VERDICT_DIR ?? join(config.DATA_DIR, 'proving-key-verdicts'),
  };
  try {
    const evidence = await withOwnCurve(() => checkCeremonyEvidence({ ...files, ptau: config.PROVING_KEY_PTAU }, check, logger));
    logger.info(
      {
        provingKey: name, contributors: evidence.contributors, verdict: evidence.cached ? 'remembered' : 'verified now',
        seconds: Number(evidence.seconds.toFixed(1)),
      },
      'proving key: its multi-party ceremony verifies',
    );
  } catch (error) {
    if (!(error instanceof CeremonyError)) throw error;
    if (!config.PROVING_KEY_ALLOW_DEVELOPMENT) {
      throw new ConfigError(`proving key ${name}: its ceremony does not verify, so whoever made its randomness may forge ` +
        `proofs: ${error.message}. Production proves only with a key from a multi-party ceremony whose transcript verifies ` +
        '(circuits/README.md, "Running a proving-key ceremony with real contributors")');
    }
    logger.warn(
      { provingKey: name, reason: error.message },
      'PROVING_KEY_ALLOW_DEVELOPMENT: proving with a development key in production mode (test stacks only: it can be forged)',
    );
  }
  return { zkey: files.zkey, verificationKey, vkSha256 };
}
