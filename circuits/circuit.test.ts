import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as snarkjs from 'snarkjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leafOf, nullifierHashOf, randomSecret, secretCommitment, splitOrderHash } from '../prover/commitments.ts';
import { poseidon } from '../prover/poseidon.ts';
import { buildProofInput, type CircuitInput } from '../prover/proof-input.ts';
import type { Groth16Proof } from '../prover/solidity.ts';
import { artifacts } from './artifacts.ts';
import { SAMPLE_ORDER_HASH, samplePath, sampleProofInput } from '../test/support/circuit-vectors.ts';

interface WitnessCalculator { calculateWTNSBin(input: CircuitInput, sanityCheck: boolean): Promise<Uint8Array> }

describe('deposit circuit', () => {
  let witnessCalculator: WitnessCalculator;
  const vkey = JSON.parse(readFileSync(artifacts.verificationKey, 'utf8')) as object;
  const zkey = { type: 'mem' as const, data: new Uint8Array(readFileSync(artifacts.zkey)) };
  const sample = sampleProofInput();
  let proof: Groth16Proof;
  let publicSignals: string[];

  const witness = (input: CircuitInput) => witnessCalculator.calculateWTNSBin(input, true);

  beforeAll(async () => {
    const build = createRequire(import.meta.url)(artifacts.witnessCalculator) as (code: Uint8Array) => Promise<WitnessCalculator>;
    witnessCalculator = await build(readFileSync(artifacts.wasm));
    ({ proof, publicSignals } = await snarkjs.groth16.prove(zkey, { type: 'mem', data: await witness(sample.input) }));
  });
  afterAll(async () => {
    // snarkjs's multi-threaded curve owns worker threads; without this the test process lingers.
    await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
  });

  it('proves a valid deposit, with public signals [root, orderHashHi, orderHashLo, nullifierHash]', async () => {
    const { root, orderHashHi, orderHashLo, nullifierHash } = sample.input;
    expect(publicSignals).toEqual([root, orderHashHi, orderHashLo, nullifierHash]);
    expect(nullifierHash).toBe(nullifierHashOf(sample.secret).toString());
    expect(await snarkjs.groth16.verify(vkey, publicSignals, proof)).toBe(true);
  });

  it.each([
    ['root', 0],
    ['orderHashHi', 1],
    ['orderHashLo', 2],
    ['nullifierHash', 3],
  ])('rejects the proof when the public %s changes', async (_name, position) => {
    const tampered = [...publicSignals];
    tampered[position] = (BigInt(tampered[position]!) + 1n).toString();
    expect(await snarkjs.groth16.verify(vkey, tampered, proof)).toBe(false);
  });

  it('rejects the proof when presented for another order', async () => {
    const other = splitOrderHash(`0x${'ab'.repeat(32)}`);
    const signals = [sample.input.root, other.hi.toString(), other.lo.toString(), sample.input.nullifierHash];
    expect(await snarkjs.groth16.verify(vkey, signals, proof)).toBe(false);
  });

  it('rejects a tampered proof point', async () => {
    const bad = { ...proof, pi_a: [proof.pi_c[0]!, proof.pi_c[1]!, '1'] };
    expect(await snarkjs.groth16.verify(vkey, publicSignals, bad)).toBe(false);
  });

  const tamper = (change: (input: CircuitInput) => void): CircuitInput => {
    const input = structuredClone(sample.input);
    change(input);
    return input;
  };

  it.each<[string, (input: CircuitInput) => void]>([
    ['a wrong root', (i) => { i.root = (BigInt(i.root) + 1n).toString(); }],
    ['a wrong path element', (i) => { i.pathElements[7] = (BigInt(i.pathElements[7]!) + 1n).toString(); }],
    ['a flipped path index', (i) => { i.pathIndices[0] = i.pathIndices[0] === '1' ? '0' : '1'; }],
    ['a non-boolean path index', (i) => { i.pathIndices[3] = '2'; }],
    ['another order hash', (i) => { i.orderHashLo = (BigInt(i.orderHashLo) ^ 1n).toString(); }],
    ['another secret', (i) => { i.secret = randomSecret().toString(); }],
    ['a nullifier of another secret', (i) => { i.nullifierHash = nullifierHashOf(randomSecret()).toString(); }],
  ])('fails at witness time for %s', async (_name, change) => {
    await expect(witness(tamper(change))).rejects.toThrow(/Assert Failed|Error in template/i);
  });

  it('fails at witness time for an order hash half of 2^128 or more, even when the tree holds that leaf', async () => {
    // (hi - 1, lo + 2^128) encodes the same 256-bit number; only the range check stops it.
    const secret = randomSecret();
    const { hi, lo } = splitOrderHash(SAMPLE_ORDER_HASH);
    const parts = { hi: hi - 1n, lo: lo + (1n << 128n) };
    const path = samplePath(poseidon([parts.hi, parts.lo, secretCommitment(secret)]), 3);
    const input = { ...buildProofInput({ secret, orderHash: SAMPLE_ORDER_HASH, path }), orderHashHi: parts.hi.toString(), orderHashLo: parts.lo.toString() };
    await expect(witness(input)).rejects.toThrow(/Assert Failed|Error in template/i);
    // The same construction with in-range halves is accepted: the failure above is the range check.
    const fine = samplePath(leafOf(SAMPLE_ORDER_HASH, secretCommitment(secret)), 3);
    await expect(witness(buildProofInput({ secret, orderHash: SAMPLE_ORDER_HASH, path: fine }))).resolves.toBeInstanceOf(Uint8Array);
  });
});
