import { buildPoseidon, type CircomlibPoseidon } from 'circomlibjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { FIELD_MODULUS, FieldElementError } from './field.ts';
import { poseidon } from './poseidon.ts';

describe('poseidon', () => {
  let reference: CircomlibPoseidon;
  beforeAll(async () => {
    reference = await buildPoseidon();
  });
  const ref = (xs: bigint[]) => reference.F.toObject(reference(xs));

  it('matches circomlibjs published vectors', () => {
    // circomlibjs test/poseidon.js
    expect(poseidon([1n, 2n])).toBe(0x115cc0f5e7d690413df64c6b9662e9cf2a3617f2743245519e19607a4417189an);
    expect(poseidon([1n])).toBe(18586133768512220936620570745912940619677854269274689475585506675881198879027n);
  });

  it('equals circomlibjs (wasm) for 1, 2 and 3 random inputs, including p-1 and 0', () => {
    const samples: bigint[] = [0n, 1n, FIELD_MODULUS - 1n];
    for (let i = 0; i < 30; i++) samples.push(BigInt(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}`) % FIELD_MODULUS);
    for (let i = 0; i < samples.length; i++) {
      for (let n = 1; n <= 3; n++) {
        const xs = Array.from({ length: n }, (_, k) => samples[(i + k * 7) % samples.length]!);
        expect(poseidon(xs)).toBe(ref(xs));
      }
    }
  });

  it('rejects inputs outside the field instead of reducing them', () => {
    expect(() => poseidon([FIELD_MODULUS])).toThrow(FieldElementError);
    expect(() => poseidon([-1n])).toThrow(FieldElementError);
  });

  it('rejects an unsupported number of inputs', () => {
    expect(() => poseidon([])).toThrow(RangeError);
    expect(() => poseidon([1n, 2n, 3n, 4n])).toThrow(RangeError);
  });
});
