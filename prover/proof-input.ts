import { nullifierHashOf, splitOrderHash, TREE_DEPTH } from './commitments.ts';
import { assertField } from './field.ts';

/** The deposit circuit's input, every value a decimal string (circom's witness calculator takes them as is). */
export interface CircuitInput {
  root: string;
  orderHashHi: string;
  orderHashLo: string;
  nullifierHash: string;
  secret: string;
  pathElements: string[];
  pathIndices: string[];
}

/** The part of a Merkle path a proof needs (what `MerkleTreeStore.getPath` returns). */
export interface InclusionPath {
  root: bigint;
  pathElements: readonly bigint[];
  pathIndices: readonly number[];
}

/**
 * The circuit input proving that the deposit of `orderHash` made with `secret` sits under
 * `path.root`. It computes the public signals (order hash halves, nullifier hash) itself, so a
 * caller cannot pair a secret with someone else's nullifier. It does not check the leaf: a path
 * that does not lead from this order's leaf to the root fails at witness time.
 */
export function buildProofInput({ secret, orderHash, path }: { secret: bigint; orderHash: string; path: InclusionPath }): CircuitInput {
  assertField(secret, 'secret');
  assertField(path.root, 'path.root');
  if (path.pathElements.length !== TREE_DEPTH || path.pathIndices.length !== TREE_DEPTH) {
    throw new RangeError(`path must have ${TREE_DEPTH} elements and indices, received ${path.pathElements.length} and ${path.pathIndices.length}`);
  }
  const { hi, lo } = splitOrderHash(orderHash);
  return {
    root: path.root.toString(),
    orderHashHi: hi.toString(),
    orderHashLo: lo.toString(),
    nullifierHash: nullifierHashOf(secret).toString(),
    secret: secret.toString(),
    pathElements: path.pathElements.map((e, i) => assertField(e, `path.pathElements[${i}]`).toString()),
    pathIndices: path.pathIndices.map((bit, i) => {
      if (bit !== 0 && bit !== 1) throw new RangeError(`path.pathIndices[${i}] must be 0 or 1, received '${bit}'`);
      return String(bit);
    }),
  };
}

/** The public signals a correct proof for `input` carries, in the circuit's order. */
export const expectedPublicSignals = (input: CircuitInput): string[] => orderedPublicSignals(input);

/**
 * The deposit circuit's public signals by name, in the circuit's order. Everything that reads a
 * proof's signals (the stored proof, the contracts' call data, tests) names them through here
 * instead of counting positions.
 */
export const PUBLIC_SIGNAL_NAMES = ['root', 'orderHashHi', 'orderHashLo', 'nullifierHash'] as const;

export type PublicSignalName = (typeof PUBLIC_SIGNAL_NAMES)[number];

/** A proof's public signals, each a decimal string, by name. */
export type PublicSignals = Record<PublicSignalName, string>;

/** The named signals of `signals` (the circuit's order). Throws `RangeError` when the count is not the circuit's. */
export function namePublicSignals(signals: readonly string[]): PublicSignals {
  if (signals.length !== PUBLIC_SIGNAL_NAMES.length) {
    throw new RangeError(`publicSignals must hold ${PUBLIC_SIGNAL_NAMES.length} values, received ${signals.length}`);
  }
  return Object.fromEntries(PUBLIC_SIGNAL_NAMES.map((name, i) => [name, signals[i]!])) as PublicSignals;
}

/** The signals in the circuit's order, as a verifier takes them. */
export function orderedPublicSignals(signals: PublicSignals): string[] {
  return PUBLIC_SIGNAL_NAMES.map((name) => signals[name]);
}
