import * as snarkjs from 'snarkjs';
import { checkEveryContributionChangesKey, readRecordedDeltas } from './recorded-deltas.ts';
import { CeremonyError, checkChain, contributionsOf, sha256File, type Transcript } from './transcript.ts';

/** Distinct contributors a finished ceremony needs before its beacon when CEREMONY_MIN_CONTRIBUTORS is unset. */
export const DEFAULT_MIN_CONTRIBUTORS = 2;

/**
 * CEREMONY_MIN_CONTRIBUTORS from an environment (default 2); throws `CeremonyError` naming the
 * variable when it is not a whole number from 1 to 1000.
 */
export function minContributorsFrom(env: Record<string, string | undefined>): number {
  const raw = env.CEREMONY_MIN_CONTRIBUTORS;
  if (raw === undefined || raw === '') return DEFAULT_MIN_CONTRIBUTORS;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1 || value > 1000) {
    throw new CeremonyError(`CEREMONY_MIN_CONTRIBUTORS must be a whole number from 1 to 1000, received '${raw}'`);
  }
  return value;
}

/**
 * A finished ceremony's quorum: at least `min` distinct contributors (names compared trimmed and
 * case-insensitively) before the beacon. Throws `CeremonyError` saying how many it has.
 */
export function checkQuorum(transcript: Transcript, min: number): void {
  const names = new Set(transcript.entries.filter((e) => e.step === 'contribution').map((e) => e.name.trim().toLowerCase()));
  if (names.size < min) {
    throw new CeremonyError(`the ceremony has ${names.size} distinct contributor${names.size === 1 ? '' : 's'} before its ` +
      `beacon; a finished one needs at least ${min} (CEREMONY_MIN_CONTRIBUTORS): whoever made all of its randomness can forge proofs`);
  }
}

/** One contribution as the zkey itself records it (snarkjs's mpc parameters, read back by `zkey verify`). */
export interface RecordedContribution {
  name: string;
  /** blake2b-512 of the contribution's public key, hex. */
  hash: string;
  beacon?: { hash: string; iterationsExp: number };
}

/** The hex of snarkjs's `formatHash` text (four rows of four 8-digit words). */
const hexOfFormatted = (text: string) => text.replace(/[^0-9a-f]/gi, '').toLowerCase();

/**
 * Runs snarkjs's `zkey verify` (the cryptography: the zkey follows from the r1cs and the phase-1
 * file through a chain of valid contributions) and returns the contributions it reports, in order.
 * With `init` (the ceremony's first zkey, itself checked against the r1cs by the final `verify`)
 * it verifies from that file instead, which spares computing the first zkey again.
 * Throws `CeremonyError` with snarkjs's reasons when the zkey does not verify.
 */
export async function verifyZkeyCryptography(r1cs: string, ptau: string, zkey: string, init?: string): Promise<RecordedContribution[]> {
  const lines: string[] = [];
  const problems: string[] = [];
  const logger = {
    info: (message: string) => lines.push(String(message)),
    error: (message: string) => problems.push(String(message)),
    warn: (message: string) => problems.push(String(message)),
    debug: () => {},
  };
  // snarkjs reports some failures with console.log rather than the logger: keep those too.
  const log = console.log;
  console.log = (...args: unknown[]) => problems.push(args.map(String).join(' '));
  let ok: boolean;
  try {
    ok = init ? await snarkjs.zKey.verifyFromInit(init, ptau, zkey, logger) : await snarkjs.zKey.verifyFromR1cs(r1cs, ptau, zkey, logger);
  } catch (error) {
    throw new CeremonyError(`zkey ${zkey} does not verify: ${(error as Error).message}`);
  } finally {
    console.log = log;
  }
  if (!ok) throw new CeremonyError(`zkey ${zkey} does not verify against the r1cs and phase 1: ${problems.join('; ') || 'snarkjs refused it'}`);
  // snarkjs lists them newest first, each "contribution #n name:" followed by its hash (and a
  // beacon's value and iterations): placed by their number.
  const recorded: RecordedContribution[] = [];
  let current: RecordedContribution | undefined;
  for (const line of lines) {
    const contribution = /^contribution #(\d+) (.*):\n([\s\S]+)$/.exec(line);
    if (contribution) {
      current = { name: contribution[2]!, hash: hexOfFormatted(contribution[3]!) };
      recorded[Number(contribution[1]) - 1] = current;
      continue;
    }
    const generator = /^Beacon generator: ([0-9a-f]+)$/i.exec(line);
    if (generator && current) current.beacon = { hash: generator[1]!.toLowerCase(), iterationsExp: 0 };
    const iterations = /^Beacon iterations Exp: (\d+)$/.exec(line);
    if (iterations && current?.beacon) current.beacon.iterationsExp = Number(iterations[1]);
  }
  if (recorded.some((entry) => entry === undefined)) throw new CeremonyError(`zkey ${zkey}: snarkjs did not report every contribution`);
  return recorded;
}

export interface VerifyOptions {
  r1cs: string;
  ptau: string;
  zkey: string;
  transcript: Transcript;
  /**
   * A finished ceremony: the last step is the beacon, and `minContributors` distinct contributors
   * (default 2) came before it.
   */
  requireBeacon?: boolean;
  minContributors?: number;
  /** The ceremony's first zkey (the init step's output): verify from it rather than from the r1cs. */
  init?: string;
}

/**
 * Everything `verify` checks, in order: the r1cs and the phase-1 file are the ones the transcript
 * pins; the transcript's hash chain ends at this zkey; when finished, the beacon closes it after
 * enough distinct contributors; every contribution the zkey records changes its key (no identity,
 * x = 1, contribution); snarkjs verifies the zkey against r1cs and phase 1; the contributions the
 * zkey records are the transcript's, same names, same hashes, same beacon, same order. The cheap
 * checks come first, so a refusal is quick; acceptance needs all of them. Resolves with the recorded
 * contributions; throws `CeremonyError` otherwise.
 */
export async function verifyCeremony(options: VerifyOptions): Promise<RecordedContribution[]> {
  const { transcript } = options;
  const [r1csSha, ptauSha, zkeySha] = await Promise.all([sha256File(options.r1cs), sha256File(options.ptau), sha256File(options.zkey)]);
  if (r1csSha !== transcript.r1csSha256) throw new CeremonyError(`r1cs ${options.r1cs} has sha256 ${r1csSha}; the transcript is for ${transcript.r1csSha256}`);
  if (ptauSha !== transcript.phase1.sha256) {
    throw new CeremonyError(`phase-1 file ${options.ptau} has sha256 ${ptauSha}; the transcript ` +
      `pins ${transcript.phase1.sha256}`);
  }
  checkChain(transcript, zkeySha);
  const expected = contributionsOf(transcript);
  if (options.requireBeacon) {
    if (expected.at(-1)?.step !== 'beacon') throw new CeremonyError('the ceremony is not closed: its last step is not the beacon');
    checkQuorum(transcript, options.minContributors ?? DEFAULT_MIN_CONTRIBUTORS);
  }
  const deltas = await readRecordedDeltas(options.zkey);
  const listed = (names: { name: string; beacon: boolean }[]) => names.map((c) => `${c.beacon ? 'beacon ' : ''}${JSON.stringify(c.name)}`).join(', ') || 'none';
  const inZkey = listed(deltas.contributions.map((c) => ({ name: c.name, beacon: c.type === 1 })));
  const inTranscript = listed(expected.map((e) => ({ name: e.name, beacon: e.step === 'beacon' })));
  if (inZkey !== inTranscript) throw new CeremonyError(`the zkey records the contributions ${inZkey}; the transcript ${inTranscript}`);
  checkEveryContributionChangesKey(options.zkey, deltas);
  if (options.init && (await sha256File(options.init)) !== transcript.entries[0]!.newSha256) {
    throw new CeremonyError(`${options.init} is not the zkey the init step wrote (${transcript.entries[0]!.newSha256})`);
  }
  const recorded = await verifyZkeyCryptography(options.r1cs, options.ptau, options.zkey, options.init);
  if (recorded.length !== expected.length) {
    throw new CeremonyError(`zkey records ${recorded.length} contributions, the transcript ${expected.length}`);
  }
  recorded.forEach((record, i) => {
    const entry = expected[i]!;
    if (record.name !== entry.name || record.hash !== entry.contributionHash) {
      throw new CeremonyError(`contribution ${i + 1}: the zkey ` +
        `records ${JSON.stringify(record.name)} ${record.hash}, the ` +
        `transcript ${JSON.stringify(entry.name)} ${entry.contributionHash}`);
    }
    if ((entry.step === 'beacon') !== Boolean(record.beacon)
      || (record.beacon && (record.beacon.hash !== entry.beacon?.hash || record.beacon.iterationsExp !== entry.beacon?.iterationsExp))) {
      throw new CeremonyError(`contribution ${i + 1}: the beacon the zkey records differs from the transcript's`);
    }
  });
  return recorded;
}
