import { open, type FileHandle } from 'node:fs/promises';
import { CeremonyError } from './transcript.ts';

/**
 * What a Groth16 zkey records of its phase-2 contributions, read from the file's bytes (snarkjs's
 * binary layout: "zkey", version, sections; section 2 the header, section 10 the contributions).
 * Points are compared as stored (affine, Montgomery form, little-endian): one point, one spelling.
 * Reading needs no curve arithmetic, so it is cheap enough to run before snarkjs's `zkey verify`,
 * which is what ties these bytes to the key.
 */

/** One contribution's delta as recorded. */
export interface RecordedDelta {
  name: string;
  /** 0 a contribution, 1 the beacon (snarkjs's `type`). */
  type: number;
  /** delta in G1 after this contribution (hex of the stored bytes). */
  deltaAfter: string;
  /** The contribution's public key: s and s·x in G1 (x = 1 makes them equal). */
  g1S: string;
  g1Sx: string;
}

export interface RecordedDeltas {
  /** delta in G1 before any contribution: the generator, as the init step writes it. */
  initialDelta: string;
  /** delta in G1 in the key's header (the one proofs are made with). */
  headerDelta: string;
  contributions: RecordedDelta[];
}

const G1_BYTES = 64;
const G2_BYTES = 128;

async function readAt(file: FileHandle, position: number, length: number, what: string): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, position);
  if (bytesRead !== length) throw new CeremonyError(`zkey: ${what} runs past the end of the file`);
  return buffer;
}

/** The G1 generator (1, 2) in Montgomery form, little-endian, for the base field modulus q. */
function generatorBytes(q: bigint, n8q: number): string {
  const montgomery = (value: bigint) => {
    let m = (value << BigInt(n8q * 8)) % q;
    const bytes = Buffer.alloc(n8q);
    for (let i = 0; i < n8q; i++, m >>= 8n) bytes[i] = Number(m & 0xffn);
    return bytes;
  };
  return Buffer.concat([montgomery(1n), montgomery(2n)]).toString('hex');
}

/** Reads the deltas a zkey records; throws `CeremonyError` when the file is not a Groth16 zkey. */
export async function readRecordedDeltas(zkey: string): Promise<RecordedDeltas> {
  const file = await open(zkey, 'r').catch((error: Error) => {
    throw new CeremonyError(`zkey ${zkey} cannot be read: ${error.message}`);
  });
  try {
    const { size } = await file.stat();
    const head = await readAt(file, 0, 12, 'the file header');
    if (head.toString('latin1', 0, 4) !== 'zkey') throw new CeremonyError(`${zkey} is not a zkey file`);
    const sections = new Map<number, { at: number; size: number }>();
    let at = 12;
    for (let i = head.readUInt32LE(8); i > 0; i--) {
      const entry = await readAt(file, at, 12, 'a section header');
      const length = Number(entry.readBigUInt64LE(4));
      if (at + 12 + length > size) throw new CeremonyError(`zkey ${zkey}: section ${entry.readUInt32LE(0)} runs past the end of the file`);
      if (sections.has(entry.readUInt32LE(0))) throw new CeremonyError(`zkey ${zkey}: section ${entry.readUInt32LE(0)} appears twice`);
      sections.set(entry.readUInt32LE(0), { at: at + 12, size: length });
      at += 12 + length;
    }
    const header = sections.get(2);
    const mpc = sections.get(10);
    if (!header || !mpc) throw new CeremonyError(`zkey ${zkey} has no Groth16 header or no contributions section`);

    const h = await readAt(file, header.at, header.size, 'the Groth16 header');
    const n8q = h.readUInt32LE(0);
    if (n8q !== 32) throw new CeremonyError(`zkey ${zkey} is not on a 254-bit curve (field elements of ${n8q} bytes)`);
    const q = BigInt(`0x${Buffer.from(h.subarray(4, 4 + n8q)).reverse().toString('hex')}`);
    const n8r = h.readUInt32LE(4 + n8q);
    // n8r, r, nVars, nPublic, domainSize, then alpha1, beta1, beta2, gamma2, delta1.
    const delta1At = 4 + n8q + 4 + n8r + 12 + G1_BYTES * 2 + G2_BYTES * 2;
    const headerDelta = h.subarray(delta1At, delta1At + G1_BYTES).toString('hex');

    const m = await readAt(file, mpc.at, mpc.size, 'the contributions section');
    let p = 64; // the circuit's hash
    const take = (length: number) => {
      if (p + length > m.length) throw new CeremonyError(`zkey ${zkey}: the contributions section is cut short`);
      const bytes = m.subarray(p, p + length);
      p += length;
      return bytes;
    };
    const count = take(4).readUInt32LE(0);
    const contributions: RecordedDelta[] = [];
    for (let i = 0; i < count; i++) {
      const deltaAfter = take(G1_BYTES).toString('hex');
      const g1S = take(G1_BYTES).toString('hex');
      const g1Sx = take(G1_BYTES).toString('hex');
      take(G2_BYTES + 64); // s·x in G2 and the transcript hash
      const type = take(4).readUInt32LE(0);
      const params = take(take(4).readUInt32LE(0));
      let name = '';
      // Parameters: 1 the name (length-prefixed), 2 the beacon's iterations, 3 its hash (length-prefixed).
      for (let k = 0; k < params.length;) {
        const kind = params[k]!;
        if (kind === 2) {
          k += 2;
          continue;
        }
        const length = params[k + 1] ?? 0;
        if (kind === 1) name = params.subarray(k + 2, k + 2 + length).toString('utf8');
        k += 2 + length;
      }
      contributions.push({ name, type, deltaAfter, g1S, g1Sx });
    }
    return { initialDelta: generatorBytes(q, n8q), headerDelta, contributions };
  } finally {
    await file.close();
  }
}

/**
 * Every contribution must change the key: its delta differs from every delta before it (the
 * generator, then each earlier contribution's), so none is an identity (x = 1) and none undoes
 * earlier ones. Throws `CeremonyError` naming the first that does not.
 */
export function checkEveryContributionChangesKey(zkey: string, recorded: RecordedDeltas): void {
  const seen = new Set([recorded.initialDelta]);
  recorded.contributions.forEach((c, i) => {
    const what = `contribution ${i + 1} (${c.type === 1 ? 'the beacon' : JSON.stringify(c.name)})`;
    if (c.g1S === c.g1Sx) {
      throw new CeremonyError(`zkey ${zkey}: ${what} does not change the key: its public key is x = 1 (an identity contribution)`);
    }
    if (seen.has(c.deltaAfter)) {
      throw new CeremonyError(`zkey ${zkey}: ${what} does not change the key: its delta equals one before it ` +
        '(an identity contribution, or one undoing earlier ones)');
    }
    seen.add(c.deltaAfter);
  });
  const last = recorded.contributions.at(-1)?.deltaAfter ?? recorded.initialDelta;
  if (last !== recorded.headerDelta) throw new CeremonyError(`zkey ${zkey}: the key's delta is not the one its last contribution recorded`);
}
