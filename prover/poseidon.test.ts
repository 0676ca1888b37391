import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
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

  it('uses circomlibjs\'s own constants for 1 to 3 inputs (poseidon-constants.json is their copy)', () => {
    // circomlibjs's package "exports" hides src/, so locate the file next to its CommonJS build.
    const file = join(dirname(createRequire(import.meta.url).resolve('circomlibjs')), '..', 'src', 'poseidon_constants_opt.json');
    const original = JSON.parse(readFileSync(file, 'utf8')) as Record<'C' | 'S' | 'M' | 'P', unknown[]>;
    const copy = JSON.parse(readFileSync(new URL('./poseidon-constants.json', import.meta.url), 'utf8'));
    expect(copy).toEqual({ C: original.C.slice(0, 3), S: original.S.slice(0, 3), M: original.M.slice(0, 3), P: original.P.slice(0, 3) });
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
