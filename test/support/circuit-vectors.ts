import { leafOf, randomSecret, secretCommitment, TREE_DEPTH, zeroHashes } from '../../prover/commitments.ts';
import { poseidon2 } from '../../prover/poseidon.ts';
import { buildProofInput, type CircuitInput, type InclusionPath } from '../../prover/proof-input.ts';

/** An order hash used across the circuit tests and the bench. */
export const SAMPLE_ORDER_HASH = '0xd1c7a9e5b3f18264c0e9a7b5d3f1e8c6a4b2d0f9e7c5a3b1d8f6e4c2a0b9d7f5';

/**
 * A valid circuit input for a deposit of `orderHash` at `index`, in a tree whose other leaves are
 * random (`neighbours` of them, at indices 0..neighbours), built directly from the hash layout.
 */
export function sampleProofInput({ orderHash = SAMPLE_ORDER_HASH, index = 5, neighbours = 8, secret = randomSecret() } = {}): { input: CircuitInput; secret: bigint; index: number } {
  const path = samplePath(leafOf(orderHash, secretCommitment(secret)), index, neighbours);
  return { input: buildProofInput({ secret, orderHash, path }), secret, index };
}

/** Root and path of `leaf` at `index` in a tree whose leaves 0..neighbours (other than `index`) are random. */
export function samplePath(leaf: bigint, index: number, neighbours = 8): InclusionPath {
  const leaves = new Map<number, bigint>();
  for (let i = 0; i <= neighbours; i++) leaves.set(i, leafOf(`0x${(i + 1).toString(16).padStart(64, '0')}`, secretCommitment(randomSecret())));
  leaves.set(index, leaf);

  const zeros = zeroHashes();
  const pathElements: bigint[] = [];
  let level = leaves;
  for (let l = 0; l < TREE_DEPTH; l++) {
    pathElements.push(level.get((index >> l) ^ 1) ?? zeros[l]!);
    const up = new Map<number, bigint>();
    for (const idx of level.keys()) {
      const parent = idx >> 1;
      if (!up.has(parent)) up.set(parent, poseidon2(level.get(parent * 2) ?? zeros[l]!, level.get(parent * 2 + 1) ?? zeros[l]!));
    }
    level = up;
  }
  const root = level.get(0)!;
  const pathIndices = Array.from({ length: TREE_DEPTH }, (_, l) => (index >> l) & 1);
  return { root, pathElements, pathIndices };
}
