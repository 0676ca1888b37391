import { TREE_DEPTH, zeroHashes } from '../commitments.ts';
import { poseidon2 } from '../poseidon.ts';

/** A tree position: level 0 holds the leaves, level TREE_DEPTH the root. */
export interface NodePosition { level: number; idx: number }
export interface NodeValue extends NodePosition { hash: bigint }

/** Key of a node in the maps below. */
export const nodeKey = (level: number, idx: number): string => `${level}:${idx}`;

/**
 * Which stored nodes recomputing the ancestors of `leafIndices` reads: at each level, the
 * siblings of the touched nodes that are not themselves touched. O(depth) per leaf at worst,
 * far less for a contiguous batch.
 */
export function siblingsNeeded(leafIndices: Iterable<number>): NodePosition[] {
  const needed: NodePosition[] = [];
  let touched = new Set(leafIndices);
  for (let level = 0; level < TREE_DEPTH; level++) {
    const parents = new Set<number>();
    for (const idx of touched) {
      if (!touched.has(idx ^ 1)) needed.push({ level, idx: idx ^ 1 });
      parents.add(idx >> 1);
    }
    touched = parents;
  }
  return needed;
}

/**
 * The new values of every ancestor of the given leaves (and the leaves themselves), given the
 * stored values of `siblingsNeeded(...)`. A sibling missing from `stored` is an empty subtree,
 * whose hash is the zero hash of its level.
 */
export function recomputeAncestors(leaves: ReadonlyMap<number, bigint>, stored: ReadonlyMap<string, bigint>): NodeValue[] {
  const zeros = zeroHashes();
  const out: NodeValue[] = [];
  let current = new Map(leaves);
  for (let level = 0; level < TREE_DEPTH; level++) {
    const valueAt = (idx: number) => current.get(idx) ?? stored.get(nodeKey(level, idx)) ?? zeros[level]!;
    const parents = new Map<number, bigint>();
    for (const [idx, hash] of current) {
      out.push({ level, idx, hash });
      const parent = idx >> 1;
      if (parents.has(parent)) continue;
      parents.set(parent, poseidon2(valueAt(parent << 1), valueAt((parent << 1) | 1)));
    }
    current = parents;
  }
  for (const [idx, hash] of current) out.push({ level: TREE_DEPTH, idx, hash });
  return out;
}
