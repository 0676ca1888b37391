import { randomBytes } from 'node:crypto';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import * as snarkjs from 'snarkjs';
import { CIRCUIT_NAME } from '../compile.ts';
import { CeremonyError, readTranscript, sha256File, writeTranscript, type Transcript, type TranscriptEntry } from './transcript.ts';
import { checkQuorum, DEFAULT_MIN_CONTRIBUTORS, verifyCeremony } from './zkey-check.ts';

/**
 * The ceremony's steps as functions (the CLI in cli.ts is a thin layer over them; the tests call
 * them directly). Each phase-2 step reads one zkey and writes the next, checking first that what it
 * builds on verifies, and appends its entry to the transcript.
 */

const now = () => new Date().toISOString();
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

export interface InitOptions {
  r1cs: string;
  /** The phase-1 file (a prepared powers of tau, e.g. a public perpetual one). */
  ptau: string;
  /** Its expected sha256: the file is refused unless it hashes to this. */
  ptauSha256: string;
  /** Where the public phase-1 file came from (a URL), recorded in the transcript. */
  ptauSource?: string;
  /** The first zkey (no contributions). */
  out: string;
  transcript: string;
}

/** `init`: the phase-2 start from the r1cs and the pinned phase-1 file; starts a new transcript. */
export async function init(options: InitOptions): Promise<Transcript> {
  const ptauSha = await sha256File(options.ptau);
  if (ptauSha !== options.ptauSha256.toLowerCase()) {
    throw new CeremonyError(`phase-1 file ${options.ptau} has sha256 ${ptauSha}, not the pinned ${options.ptauSha256}`);
  }
  const info = await snarkjs.r1cs.info(options.r1cs);
  const power = Math.ceil(Math.log2(info.nConstraints + info.nPubInputs + info.nOutputs + 1));
  const ok = await snarkjs.zKey.newZKey(options.r1cs, options.ptau, options.out);
  if (ok === false || ok === -1) {
    throw new CeremonyError(`snarkjs could not start phase 2 from ${options.ptau} (is it prepared for phase 2 and ` +
      `of power ${power} or more?)`);
  }
  const transcript: Transcript = {
    circuit: `${CIRCUIT_NAME}.circom`,
    r1csSha256: await sha256File(options.r1cs),
    phase1: { source: options.ptauSource ?? basename(options.ptau), sha256: ptauSha, power },
    entries: [{ step: 'init', name: 'init', contributionHash: null, previousSha256: ptauSha, newSha256: await sha256File(options.out), at: now() }],
  };
  await writeTranscript(options.transcript, transcript);
  return transcript;
}

export interface StepOptions {
  r1cs: string;
  ptau: string;
  /** The zkey to build on (the previous party's output). */
  in: string;
  out: string;
  transcript: string;
  /** The contributor's name, written into the zkey and the transcript. */
  name: string;
  /** The ceremony's first zkey, when at hand: the previous file is verified from it (faster than from the r1cs). */
  init?: string;
}

/**
 * Checks, before building on it, that `in` is what the transcript's last step wrote and that it
 * verifies (snarkjs, against r1cs and phase 1, every earlier contribution as recorded).
 */
async function verifiedPrevious(options: StepOptions): Promise<Transcript> {
  const transcript = await readTranscript(options.transcript);
  if (transcript.entries.at(-1)?.step === 'beacon') throw new CeremonyError('the ceremony is closed: the beacon was its last step');
  await verifyCeremony({ r1cs: options.r1cs, ptau: options.ptau, zkey: options.in, transcript, init: options.init });
  return transcript;
}

async function append(
  options: StepOptions,
  transcript: Transcript,
  entry: Omit<TranscriptEntry, 'previousSha256' | 'newSha256' | 'at'>,
): Promise<TranscriptEntry> {
  const full: TranscriptEntry = { ...entry, previousSha256: transcript.entries.at(-1)!.newSha256, newSha256: await sha256File(options.out), at: now() };
  transcript.entries.push(full);
  await writeTranscript(options.transcript, transcript);
  return full;
}

/**
 * `contribute`: verifies the previous zkey, then adds this party's randomness (the operating
 * system's 64 random bytes, mixed by snarkjs with its own; optional extra `entropy` text) and
 * appends the entry. The randomness is never written anywhere: the party should discard the
 * machine's memory of it (reboot, or a throw-away VM).
 */
export async function contribute(options: StepOptions & { entropy?: string }): Promise<TranscriptEntry> {
  if (!options.name.trim()) throw new CeremonyError('a contribution needs the contributor\'s name');
  const transcript = await verifiedPrevious(options);
  const entropy = `${randomBytes(64).toString('hex')}${options.entropy ?? ''}`;
  const hash = await snarkjs.zKey.contribute(options.in, options.out, options.name, entropy);
  if (!(hash instanceof Uint8Array)) throw new CeremonyError(`snarkjs refused to contribute to ${options.in}`);
  return append(options, transcript, { step: 'contribution', name: options.name, contributionHash: hex(hash) });
}

/**
 * `beacon`: the closing step, verifiable by anyone: randomness derived from a public value chosen
 * in advance (e.g. a future block hash, hex) through 2^`iterationsExp` hash iterations. Refused
 * before `minContributors` (default 2) distinct contributors: a ceremony closed early can never
 * pass `verify --final`.
 */
export async function beacon(options: StepOptions & { beaconHash: string; iterationsExp: number; minContributors?: number }): Promise<TranscriptEntry> {
  const beaconHash = options.beaconHash.replace(/^0x/, '').toLowerCase();
  if (!/^([0-9a-f]{2}){1,255}$/.test(beaconHash)) throw new CeremonyError('the beacon must be 1 to 255 bytes of hex');
  if (!Number.isInteger(options.iterationsExp) || options.iterationsExp < 10 || options.iterationsExp > 63) {
    throw new CeremonyError(`iterations must be an integer exponent from 10 to 63 (2^n hashes), received ${options.iterationsExp}`);
  }
  // Before the (slower) verification of the previous file: a quorum is missing whatever that file is.
  checkQuorum(await readTranscript(options.transcript), options.minContributors ?? DEFAULT_MIN_CONTRIBUTORS);
  const transcript = await verifiedPrevious(options);
  const hash = await snarkjs.zKey.beacon(options.in, options.out, options.name, beaconHash, options.iterationsExp);
  if (!(hash instanceof Uint8Array)) throw new CeremonyError(`snarkjs refused the beacon on ${options.in}`);
  return append(
    options,
    transcript,
    {
      step: 'beacon',
      name: options.name,
      contributionHash: hex(hash),
      beacon: { hash: beaconHash, iterationsExp: options.iterationsExp },
    },
  );
}

export interface Phase1Options {
  power: number;
  out: string;
  /** Names of the local contributors (each adds random entropy in turn). */
  contributors: string[];
  /** The closing beacon of phase 1 (hex), 2^10 iterations. */
  beaconHash: string;
}

/**
 * `phase1`: a local multi-party powers of tau for the devnet and tests (contributors in turn, then
 * a beacon, then prepared for phase 2). Every contributor runs on this machine, so it is no better
 * than a development phase 1: production uses a public perpetual powers of tau instead.
 * Returns the file's sha256 and each contribution hash.
 */
export async function phase1(options: Phase1Options): Promise<{ sha256: string; contributions: { name: string; hash: string }[] }> {
  const work = await mkdtemp(join(tmpdir(), 'ceremony-phase1-'));
  const curve = await snarkjs.curves.getCurveFromName('bn128');
  try {
    let file = join(work, 'pot_0.ptau');
    await snarkjs.powersOfTau.newAccumulator(curve, options.power, file);
    const contributions: { name: string; hash: string }[] = [];
    for (const [i, name] of options.contributors.entries()) {
      const next = join(work, `pot_${i + 1}.ptau`);
      const hash = await snarkjs.powersOfTau.contribute(file, next, name, randomBytes(64).toString('hex'));
      if (!(hash instanceof Uint8Array)) throw new CeremonyError(`snarkjs refused ${name}'s phase-1 contribution`);
      contributions.push({ name, hash: hex(hash) });
      file = next;
    }
    const beaconed = join(work, 'pot_beacon.ptau');
    const beaconHash = await snarkjs.powersOfTau.beacon(file, beaconed, 'phase 1 beacon', options.beaconHash.replace(/^0x/, ''), 10);
    if (!(beaconHash instanceof Uint8Array)) throw new CeremonyError('snarkjs refused the phase-1 beacon');
    contributions.push({ name: 'phase 1 beacon', hash: hex(beaconHash) });
    await snarkjs.powersOfTau.preparePhase2(beaconed, `${options.out}.tmp`);
    await rename(`${options.out}.tmp`, options.out);
    return { sha256: await sha256File(options.out), contributions };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
