import { readFileSync } from 'node:fs';
import { assertField, FIELD_MODULUS as P } from './field.ts';

/**
 * circomlib's Poseidon over BN254 in plain bigint arithmetic: synchronous, no wasm, no curve to
 * terminate, usable in any thread. It follows circomlibjs's optimised schedule (poseidon_opt.js,
 * from Neptune) with circomlibjs's own constants, so its outputs equal circomlib's `Poseidon(n)`
 * template; poseidon.test.ts checks that against circomlibjs's independent wasm implementation.
 * The constants for 1 to 3 inputs are copied from circomlibjs's src/poseidon_constants_opt.json into
 * poseidon-constants.json (poseidon.test.ts checks the copy): circomlibjs is a development
 * dependency, absent from the production image, while trades need Poseidon at run time.
 */

interface RawConstants { C: string[][]; S: string[][]; M: string[][][]; P: string[][][] }
interface Constants { C: bigint[]; S: bigint[]; M: bigint[][]; P: bigint[][]; partialRounds: number }

const FULL_ROUNDS = 8;
const PARTIAL_ROUNDS = [56, 57, 56, 60, 60, 63, 64, 63, 60, 66, 60, 65, 70, 60, 64, 68];
/** Widest hash this service uses is Poseidon3 (the leaf); loading only what is needed keeps start-up cheap. */
const MAX_INPUTS = 3;

let constants: Constants[] | undefined;

function load(): Constants[] {
  if (constants) return constants;
  const raw = JSON.parse(readFileSync(new URL('./poseidon-constants.json', import.meta.url), 'utf8')) as RawConstants;
  constants = [];
  for (let n = 1; n <= MAX_INPUTS; n++) {
    const i = n - 1;
    constants.push({
      C: raw.C[i]!.map(BigInt),
      S: raw.S[i]!.map(BigInt),
      M: raw.M[i]!.map((row) => row.map(BigInt)),
      P: raw.P[i]!.map((row) => row.map(BigInt)),
      partialRounds: PARTIAL_ROUNDS[i]!,
    });
  }
  return constants;
}

const pow5 = (a: bigint): bigint => {
  const a2 = (a * a) % P;
  return (((a2 * a2) % P) * a) % P;
};

/** state'[i] = sum_j m[j][i] * state[j] (circomlibjs's orientation of the MDS matrix). */
function mix(state: bigint[], m: bigint[][]): bigint[] {
  const out = new Array<bigint>(state.length);
  for (let i = 0; i < state.length; i++) {
    let acc = 0n;
    for (let j = 0; j < state.length; j++) acc += m[j]![i]! * state[j]!;
    out[i] = acc % P;
  }
  return out;
}

/**
 * Poseidon hash of 1 to 3 field elements, equal to circomlib's `Poseidon(inputs.length)`.
 * Throws `FieldElementError` for an input outside the field (no silent reduction: a value the
 * circuit cannot take must not hash to something it can).
 */
export function poseidon(inputs: readonly bigint[]): bigint {
  if (inputs.length < 1 || inputs.length > MAX_INPUTS) {
    throw new RangeError(`poseidon takes 1 to ${MAX_INPUTS} inputs, received ${inputs.length}`);
  }
  inputs.forEach((x, i) => assertField(x, `poseidon input ${i}`));
  const t = inputs.length + 1;
  const { C, S, M, P: Pm, partialRounds } = load()[inputs.length - 1]!;
  const half = FULL_ROUNDS / 2;

  let state = [0n, ...inputs].map((a, i) => (a + C[i]!) % P);
  for (let r = 0; r < half - 1; r++) {
    state = mix(state.map((a, i) => (pow5(a) + C[(r + 1) * t + i]!) % P), M);
  }
  state = mix(state.map((a, i) => (pow5(a) + C[half * t + i]!) % P), Pm);
  for (let r = 0; r < partialRounds; r++) {
    state[0] = (pow5(state[0]!) + C[(half + 1) * t + r]!) % P;
    const base = (t * 2 - 1) * r;
    let s0 = 0n;
    for (let j = 0; j < t; j++) s0 += S[base + j]! * state[j]!;
    for (let k = 1; k < t; k++) state[k] = (state[k]! + state[0]! * S[base + t + k - 1]!) % P;
    state[0] = s0 % P;
  }
  for (let r = 0; r < half - 1; r++) {
    state = mix(state.map((a, i) => (pow5(a) + C[(half + 1) * t + partialRounds + r * t + i]!) % P), M);
  }
  state = mix(state.map(pow5), M);
  return state[0]!;
}

/** Poseidon of two field elements: the Merkle tree's node hash. */
export const poseidon2 = (left: bigint, right: bigint): bigint => poseidon([left, right]);
