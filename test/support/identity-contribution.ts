import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as snarkjs from 'snarkjs';

/**
 * An attacker's tool for the ceremony tests: appends an identity contribution (x = 1) to a zkey,
 * the way snarkjs's own `zkey contribute` would write one if its random key came out as 1. The key
 * does not change (delta, L and H stay as they were) while the zkey records one more contributor
 * with a valid proof of knowledge, so snarkjs's `zkey verify` accepts it. Written byte for byte in
 * snarkjs's format, with snarkjs's own hash-to-G2 (not exported, loaded from its source).
 */

interface Curve {
  G1: CurveGroup;
  G2: CurveGroup;
  terminate(): Promise<void>;
}
interface CurveGroup {
  fromRprLEM(buffer: Uint8Array, offset: number): unknown;
  toRprUncompressed(buffer: Uint8Array, offset: number, point: unknown): void;
  toRprLEM(buffer: Uint8Array, offset: number, point: unknown): void;
  toAffine(point: unknown): unknown;
}

const G1 = 64;
const G2 = 128;

async function snarkjsHashToG2(): Promise<(curve: Curve, hash: Uint8Array) => unknown> {
  const main = createRequire(import.meta.url).resolve('snarkjs');
  const keypair = pathToFileURL(join(dirname(main), '..', 'src', 'keypair.js')).href;
  return ((await import(keypair)) as { hashToG2: (curve: Curve, hash: Uint8Array) => unknown }).hashToG2;
}

/**
 * Writes `out`: `input` plus an identity contribution named `name`. Resolves with its contribution
 * hash (blake2b-512 of its public key, hex), as `zkey contribute` would print it.
 */
export async function forgeIdentityContribution(input: string, out: string, name: string): Promise<string> {
  const bytes = await readFile(input);
  const sections: { type: number; start: number; end: number }[] = [];
  for (let at = 12, i = bytes.readUInt32LE(8); i > 0; i--) {
    const length = Number(bytes.readBigUInt64LE(at + 4));
    sections.push({ type: bytes.readUInt32LE(at), start: at + 12, end: at + 12 + length });
    at += 12 + length;
  }
  const section = (type: number) => {
    const found = sections.find((s) => s.type === type)!;
    return bytes.subarray(found.start, found.end);
  };
  const header = section(2);
  const n8r = header.readUInt32LE(36);
  const deltaAt = 4 + 32 + 4 + n8r + 12 + G1 * 2 + G2 * 2;
  const delta = header.subarray(deltaAt, deltaAt + G1);

  // snarkjs keeps one multi-threaded curve per process: terminated after only if this made it.
  const hadCurve = Boolean((globalThis as { curve_bn128?: unknown }).curve_bn128);
  const curve = (await snarkjs.curves.getCurveFromName('bn128')) as unknown as Curve;
  try {
    const uncompressed = (group: CurveGroup, lem: Uint8Array, size: number) => {
      const buffer = new Uint8Array(size);
      group.toRprUncompressed(buffer, 0, group.fromRprLEM(lem, 0));
      return buffer;
    };
    const mpc = section(10);
    const transcript = createHash('blake2b512').update(mpc.subarray(0, 64));
    let p = 68;
    for (let i = mpc.readUInt32LE(64); i > 0; i--) {
      transcript.update(uncompressed(curve.G1, mpc.subarray(p, p + G1), G1));
      transcript.update(uncompressed(curve.G1, mpc.subarray(p + G1, p + 2 * G1), G1));
      transcript.update(uncompressed(curve.G1, mpc.subarray(p + 2 * G1, p + 3 * G1), G1));
      transcript.update(uncompressed(curve.G2, mpc.subarray(p + 3 * G1, p + 3 * G1 + G2), G2));
      transcript.update(mpc.subarray(p + 3 * G1 + G2, p + 3 * G1 + G2 + 64));
      p += 3 * G1 + G2 + 64 + 4;
      p += 4 + mpc.readUInt32LE(p);
    }
    // s = the current delta (any point will do), s·x = s, so x = 1.
    const s = uncompressed(curve.G1, delta, G1);
    const hash = transcript.update(s).update(s).digest();
    const g2spx = new Uint8Array(G2);
    curve.G2.toRprLEM(g2spx, 0, curve.G2.toAffine((await snarkjsHashToG2())(curve, hash)));

    const nameBytes = Buffer.from(name.slice(0, 64), 'utf8');
    const params = Buffer.concat([Buffer.from([1, nameBytes.length]), nameBytes]);
    const u32 = (value: number) => {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(value);
      return b;
    };
    const contribution = Buffer.concat([delta, delta, delta, g2spx, hash, u32(0), u32(params.length), params]);
    const newMpc = Buffer.concat([mpc.subarray(0, 64), u32(mpc.readUInt32LE(64) + 1), mpc.subarray(68), contribution]);

    const parts: Buffer[] = [bytes.subarray(0, 12)];
    for (const s of sections) {
      const body = s.type === 10 ? newMpc : bytes.subarray(s.start, s.end);
      const head = Buffer.alloc(12);
      head.writeUInt32LE(s.type, 0);
      head.writeBigUInt64LE(BigInt(body.length), 4);
      parts.push(head, body);
    }
    await writeFile(out, Buffer.concat(parts));

    const publicKey = createHash('blake2b512')
      .update(uncompressed(curve.G1, delta, G1)).update(s).update(s)
      .update(uncompressed(curve.G2, g2spx, G2)).update(hash);
    return publicKey.digest('hex');
  } finally {
    if (!hadCurve) await curve.terminate();
  }
}
