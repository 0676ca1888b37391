import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';

/**
 * The ceremony's transcript: one JSON file that travels with the zkey from party to party. Each step
 * appends an entry naming the file it started from and the file it wrote (sha256 of each), so the
 * entries form a hash chain from the phase-1 file to the final zkey; snarkjs's own record inside the
 * zkey (each contribution's hash) is compared with the entries by `verify`.
 */

/** One step of the ceremony. */
export interface TranscriptEntry {
  /** `init`: the empty phase-2 zkey from r1cs and phase 1; `contribution`: a party's randomness; `beacon`: the closing public beacon. */
  step: 'init' | 'contribution' | 'beacon';
  /** Who made it (the contributor's name as written into the zkey; `init` for the first). */
  name: string;
  /** snarkjs's contribution hash (blake2b-512, hex), which the contributor publishes; null for `init`. */
  contributionHash: string | null;
  /** sha256 of the file this step read: the phase-1 file for `init`, else the previous zkey. */
  previousSha256: string;
  /** sha256 of the zkey this step wrote. */
  newSha256: string;
  /** The beacon's value (hex) and iterations exponent (2^n hash iterations), for `beacon`. */
  beacon?: { hash: string; iterationsExp: number };
  /** When the step ran (ISO 8601): informative only, never checked. */
  at: string;
}

/** The transcript file. */
export interface Transcript {
  circuit: string;
  /** sha256 of the r1cs the ceremony is for. */
  r1csSha256: string;
  /** The phase-1 (powers of tau) file: where it came from and its sha256, which pins it. */
  phase1: { source: string; sha256: string; power: number };
  entries: TranscriptEntry[];
}

/** Raised when a transcript or a zkey does not check out; the message says what and where. */
export class CeremonyError extends Error {}

const HEX64 = /^[0-9a-f]{64}$/;

/** sha256 (hex) of a file, streamed (a ptau can be hundreds of MB). */
export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path).on('error', reject).on('data', (chunk) => hash.update(chunk)).on('end', () => resolve(hash.digest('hex')));
  });
}

/** Reads a transcript file; throws `CeremonyError` when it is not one. */
export async function readTranscript(path: string): Promise<Transcript> {
  let parsed: Transcript;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8')) as Transcript;
  } catch (error) {
    throw new CeremonyError(`transcript ${path} cannot be read: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed?.entries) || !parsed.phase1 || !HEX64.test(parsed.phase1.sha256 ?? '') || !HEX64.test(parsed.r1csSha256 ?? '')) {
    throw new CeremonyError(`transcript ${path} is not a ceremony transcript (needs r1csSha256, phase1.sha256 and entries)`);
  }
  return parsed;
}

/** Writes a transcript (through a temporary file, so a crash never leaves half of one). */
export async function writeTranscript(path: string, transcript: Transcript): Promise<void> {
  await writeFile(`${path}.tmp`, `${JSON.stringify(transcript, null, 2)}\n`);
  await rename(`${path}.tmp`, path);
}

/**
 * Checks the transcript's hash chain: it starts with one `init` entry read from the pinned phase-1
 * file, every later entry read the file the one before it wrote, contributions and the beacon carry
 * a contribution hash, nothing follows the beacon, and the last entry wrote a file whose sha256 is
 * `finalSha256`. Throws `CeremonyError` naming the first entry that breaks it.
 */
export function checkChain(transcript: Transcript, finalSha256: string): void {
  const { entries } = transcript;
  if (entries.length === 0 || entries[0]!.step !== 'init') throw new CeremonyError('transcript: the first entry must be the init step');
  let expected = transcript.phase1.sha256;
  entries.forEach((entry, i) => {
    const where = `transcript entry ${i} (${entry.step} by ${JSON.stringify(entry.name)})`;
    if (i > 0 && entry.step === 'init') throw new CeremonyError(`${where}: init may only come first`);
    if (i > 0 && entries[i - 1]!.step === 'beacon') throw new CeremonyError(`${where}: nothing may follow the beacon`);
    if (!HEX64.test(entry.previousSha256) || !HEX64.test(entry.newSha256)) {
      throw new CeremonyError(`${where}: previousSha256 and newSha256 must be 64 hex digits`);
    }
    if (entry.previousSha256 !== expected) {
      throw new CeremonyError(`${where}: previousSha256 ${entry.previousSha256} does not chain: the step before wrote ${expected}`);
    }
    if (entry.step !== 'init' && !/^[0-9a-f]{128}$/.test(entry.contributionHash ?? '')) {
      throw new CeremonyError(`${where}: contributionHash must be 128 hex digits`);
    }
    if (entry.step === 'beacon' && (!entry.beacon || !/^[0-9a-f]+$/.test(entry.beacon.hash))) {
      throw new CeremonyError(`${where}: a beacon entry records the beacon's hex value`);
    }
    expected = entry.newSha256;
  });
  if (expected !== finalSha256) throw new CeremonyError(`transcript: the last entry wrote ${expected}, but the zkey given has sha256 ${finalSha256}`);
}

/** The contributions (and beacon) of a transcript, in order: what the zkey's own record must list. */
export function contributionsOf(transcript: Transcript): TranscriptEntry[] {
  return transcript.entries.filter((entry) => entry.step !== 'init');
}
