import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sampleProofInput } from '../test/support/circuit-vectors.ts';
import { nullifierHashOf, randomSecret } from './commitments.ts';
import { announceProverBackend, resolveProverBackend } from './backend.ts';
import { InvalidProofInputError, NativeProverUnavailableError } from './errors.ts';
import { ProverPool } from './pool.ts';
import type { CircuitInput } from './proof-input.ts';

const nativeBinary = inject('nativeProver');

describe('resolveProverBackend (PROVER_BACKEND)', () => {
  const missing = join(mkdtempSync(join(tmpdir(), 'native-')), 'relayer-groth16');
  const present = join(mkdtempSync(join(tmpdir(), 'native-')), 'relayer-groth16');
  writeFileSync(present, '');

  it('auto takes the native prover when it is built', () => {
    expect(resolveProverBackend('auto', present)).toMatchObject({ backend: 'native', binary: present });
  });

  it('auto falls back to snarkjs when the native prover is not built, and says so', () => {
    expect(resolveProverBackend('auto', missing)).toEqual({ backend: 'snarkjs', reason: expect.stringMatching(/not built.*proving with snarkjs/) });
  });

  it('native without the binary throws NativeProverUnavailableError naming the build command', () => {
    expect(() => resolveProverBackend('native', missing)).toThrow(NativeProverUnavailableError);
    expect(() => resolveProverBackend('native', missing)).toThrow(/npm run build:native/);
  });

  it('snarkjs never needs the binary', () => {
    expect(resolveProverBackend('snarkjs', missing)).toEqual({ backend: 'snarkjs', reason: 'PROVER_BACKEND=snarkjs' });
  });

  it('logs at start-up that a run without the native prover proves with snarkjs, and which binary a native run uses', () => {
    const lines: [object, string][] = [];
    const logger = { info: (details: object, message: string) => void lines.push([details, message]) };
    announceProverBackend(logger, { binary: missing });
    announceProverBackend(logger, { binary: present, nativeThreads: 2 });
    expect(lines).toEqual([
      [{ backend: 'snarkjs' }, expect.stringMatching(/^prover backend: snarkjs \(PROVER_BACKEND=auto and the native prover is not built/)],
      [{ backend: 'native', binary: present, nativeThreads: 2 }, expect.stringMatching(/^prover backend: native \(PROVER_BACKEND=auto and the native prover is built/)],
    ]);
    expect(() => announceProverBackend(logger, { choice: 'native', binary: missing })).toThrow(NativeProverUnavailableError);
  });
});

describe('native and snarkjs backends side by side', () => {
  let native: ProverPool;
  let wasm: ProverPool;
  beforeAll(async () => {
    native = new ProverPool({ size: 1, backend: 'native', nativeBinary: nativeBinary!, registry: new Registry() });
    wasm = new ProverPool({ size: 1, backend: 'snarkjs', registry: new Registry() });
    await Promise.all([native.ready(), wasm.ready()]);
  });
  afterAll(async () => {
    await Promise.all([native?.close(), wasm?.close()]);
  });

  it('give the same public signals for the same input', async () => {
    const { input } = sampleProofInput();
    const [a, b] = await Promise.all([native.prove(input), wasm.prove(input)]);
    expect(a.publicSignals).toEqual(b.publicSignals);
  });

  const sample = sampleProofInput();
  it.each<[string, (input: CircuitInput) => void]>([
    ['a wrong root', (i) => { i.root = (BigInt(i.root) + 1n).toString(); }],
    ['a wrong path element', (i) => { i.pathElements[7] = (BigInt(i.pathElements[7]!) + 1n).toString(); }],
    ['a flipped path index', (i) => { i.pathIndices[0] = i.pathIndices[0] === '1' ? '0' : '1'; }],
    ['a non-boolean path index', (i) => { i.pathIndices[3] = '2'; }],
    ['another order hash', (i) => { i.orderHashLo = (BigInt(i.orderHashLo) ^ 1n).toString(); }],
    ['another secret', (i) => { i.secret = randomSecret().toString(); }],
    ['a nullifier of another secret', (i) => { i.nullifierHash = nullifierHashOf(randomSecret()).toString(); }],
  ])('reject %s with the same InvalidProofInputError', async (_name, change) => {
    const input = structuredClone(sample.input);
    change(input);
    const [a, b] = await Promise.allSettled([native.prove(input), wasm.prove(input)]);
    expect(a.status).toBe('rejected');
    expect(b.status).toBe('rejected');
    const [ea, eb] = [(a as PromiseRejectedResult).reason as Error, (b as PromiseRejectedResult).reason as Error];
    expect(ea).toBeInstanceOf(InvalidProofInputError);
    expect(ea.message).toBe(eb.message);
  });
});
