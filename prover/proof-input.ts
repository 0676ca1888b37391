import { nullifierHashOf, splitOrderHash, TREE_DEPTH } from './commitments.ts';
import { assertField } from './field.ts';
import { orderedPublicSignals } from './public-signals.ts';

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
