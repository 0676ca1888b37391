import { relative } from 'node:path';
import type { Logger } from 'pino';
import { CeremonyError, readTranscript, sha256File, type Transcript } from '../circuits/ceremony/transcript.ts';
import { verifyCeremony } from '../circuits/ceremony/zkey-check.ts';
import { hasVerdict, recordVerdict, unsafeVerdictDir, verdictKey } from './ceremony-verdict.ts';

/** The files a proving key's ceremony is checked with. */
export interface CeremonyFiles {
  zkey: string;
  transcript: string;
  r1cs: string;
  /** The phase-1 file the transcript pins (PROVING_KEY_PTAU); undefined when not configured. */
  ptau: string | undefined;
}

export interface CeremonyCheck {
  minContributors: number;
  /** Where verdicts are remembered (see ceremony-verdict.ts). */
  verdictDir: string;
}

/** What the check found: the contributors (beacon excluded), and whether a remembered verdict answered. */
export interface CeremonyEvidence {
  contributors: string[];
  cached: boolean;
  seconds: number;
}

const shown = (path: string) => relative(process.cwd(), path) || path;

/**
 * Resolves when the zkey is the outcome of a finished multi-party ceremony: its transcript exists,
 * chains from the pinned phase-1 file to this zkey, closes with a beacon after enough distinct
 * contributors, every contribution changes the key, and snarkjs verifies the zkey from the r1cs and
 * phase 1 (`npm run ceremony -- verify --final`). The full verification (a minute or more on 2
 * loaded cores) runs once per (zkey, transcript, r1cs, phase 1, quorum): its positive verdict is
 * remembered in `verdictDir` when that directory is this user's alone, and answers later starts.
 * Throws `CeremonyError` saying what is missing or does not verify.
 */
export async function checkCeremonyEvidence(files: CeremonyFiles, check: CeremonyCheck, logger: Logger): Promise<CeremonyEvidence> {
  const started = performance.now();
  let transcript: Transcript;
  try {
    transcript = await readTranscript(files.transcript);
  } catch (error) {
    throw new CeremonyError(`no ceremony transcript it verifies against (${(error as Error).message})`);
  }
  if (!files.ptau) {
    throw new CeremonyError(`PROVING_KEY_PTAU is not set: the path of the phase-1 file its transcript ${shown(files.transcript)} ` +
      `pins (sha256 ${transcript.phase1.sha256}, from ${transcript.phase1.source})`);
  }
  const [zkeySha256, transcriptSha256, r1csSha256, ptauSha256] = await Promise.all(
    [files.zkey, files.transcript, files.r1cs, files.ptau].map((file) => sha256File(file).catch((error: Error) => {
      throw new CeremonyError(`${file} cannot be read: ${error.message}`);
    })),
  );
  const key = verdictKey({
    zkeySha256: zkeySha256!, transcriptSha256: transcriptSha256!, r1csSha256: r1csSha256!, ptauSha256: ptauSha256!,
    minContributors: check.minContributors,
  });
  const contributors = transcript.entries.filter((e) => e.step === 'contribution').map((e) => e.name);
  const unsafe = await unsafeVerdictDir(check.verdictDir);
  if (unsafe) {
    logger.warn({ verdictDir: check.verdictDir, reason: unsafe }, 'proving-key ceremony verdicts cannot be kept: every start verifies the ceremony in full');
  }
  if (!unsafe && await hasVerdict(check.verdictDir, key)) {
    return { contributors, cached: true, seconds: (performance.now() - started) / 1000 };
  }
  await verifyCeremony({ r1cs: files.r1cs, ptau: files.ptau, zkey: files.zkey, transcript, requireBeacon: true, minContributors: check.minContributors });
  if (!unsafe) {
    await recordVerdict(check.verdictDir, key, { zkeySha256, transcriptSha256, r1csSha256, ptauSha256, minContributors: check.minContributors, contributors })
      .catch((error: Error) => logger.warn({ verdictDir: check.verdictDir, err: error.message }, 'proving-key ceremony verdict not kept'));
  }
  return { contributors, cached: false, seconds: (performance.now() - started) / 1000 };
}
