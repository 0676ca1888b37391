import type { Knex } from 'knex';
import {
  lockMerkleTree, missingLeafRanges, readMerkleNodes, storedLeaves, storedNodes, storedRoot, writeMerkleNodes,
} from '../../db/repositories/merkle.ts';
import { TREE_DEPTH, zeroHashes } from '../commitments.ts';
import { assertField } from '../field.ts';
import { nodeKey, recomputeAncestors, siblingsNeeded, type NodePosition } from './compute.ts';
import { MerkleLeafConflictError, MerkleLeafNotFoundError } from './errors.ts';

/** Names one tree: the OrderPortal `portalAddress` on order chain `chainId`, both in their canonical form. */
export interface TreeKey { chainId: string; portalAddress: string }
export interface LeafEntry { index: number; leaf: bigint }

/** A tree at one instant: `size` = highest leaf index + 1; `leafCount < size` means a gap to fill from the chain. */
export interface TreeState { size: number; leafCount: number; root: bigint }

/** What the circuit needs to prove leaf `index` under `root` (siblings bottom-up; pathIndices[i] = bit i of index). */
export interface MerklePath extends TreeState {
  index: number;
  leaf: bigint;
  pathElements: bigint[];
  pathIndices: number[];
}

const CAPACITY = 2 ** TREE_DEPTH;
function checkEntry({ index, leaf }: LeafEntry): void {
  if (!Number.isInteger(index) || index < 0 || index >= CAPACITY) {
    throw new RangeError(`index must be an integer in [0, ${CAPACITY}), received '${index}'`);
  }
  assertField(leaf, `leaf at index ${index}`);
  // An empty slot and a zero leaf would be indistinguishable; a real leaf is a Poseidon output.
  if (leaf === 0n) throw new RangeError(`leaf at index ${index} must be non-zero, received '0'`);
}

/**
 * The order chains' incremental Poseidon trees, mirrored in PostgreSQL (tables from migration
 * 20261122_0004_merkle). Leaves may arrive in any order; an index never inserted reads as an empty
 * leaf until it is filled, so the root equals the chain's only once `leafCount === size`.
 */
export class MerkleTreeStore {
  constructor(private readonly knex: Knex) {}

  /**
   * Inserts leaves at their indices in one transaction and returns the state after it. A leaf
   * already present with the same value is skipped; a different value at a taken index throws
   * `MerkleLeafConflictError` and nothing of the batch is written. Writers of one tree are
   * serialised by a row lock on the tree, so concurrent inserts never lose an update. Cost: the
   * changed nodes (depth + 1 per isolated leaf, about 2 per leaf for a contiguous run).
   */
  async insertLeaves(key: TreeKey, entries: readonly LeafEntry[]): Promise<TreeState & { inserted: number }> {
    const batch = new Map<number, bigint>();
    for (const entry of entries) {
      checkEntry(entry);
      const earlier = batch.get(entry.index);
      if (earlier !== undefined && earlier !== entry.leaf) throw new MerkleLeafConflictError(entry.index, earlier, entry.leaf);
      batch.set(entry.index, entry.leaf);
    }
    return this.knex.transaction(async (trx) => {
      const tree = await lockMerkleTree(trx, key);
      for (const row of await storedLeaves(trx, tree.id, [...batch.keys()])) {
        const stored = BigInt(row.hash);
        if (stored !== batch.get(row.idx)) throw new MerkleLeafConflictError(row.idx, stored, batch.get(row.idx)!);
        batch.delete(row.idx);
      }
      if (batch.size === 0) {
        const root = await storedRoot(trx, tree.id, TREE_DEPTH);
        return { size: tree.size, leafCount: tree.leafCount, root: root === undefined ? zeroHashes()[TREE_DEPTH]! : BigInt(root), inserted: 0 };
      }

      const stored = new Map<string, bigint>();
      for (const row of await storedNodes(trx, tree.id, siblingsNeeded(batch.keys()))) stored.set(nodeKey(row.level, row.idx), BigInt(row.hash));
      const nodes = recomputeAncestors(batch, stored);
      let size = tree.size;
      for (const index of batch.keys()) size = Math.max(size, index + 1);
      const leafCount = tree.leafCount + batch.size;
      await writeMerkleNodes(trx, tree.id, nodes, { size, leafCount });
      const root = nodes.find((n) => n.level === TREE_DEPTH)!.hash;
      return { size, leafCount, root, inserted: batch.size };
    });
  }

  /** `insertLeaves` for one leaf. */
  async insertLeaf(key: TreeKey, index: number, leaf: bigint): Promise<TreeState & { inserted: number }> {
    return this.insertLeaves(key, [{ index, leaf }]);
  }

  /** Size, leaf count and root of the tree now; a tree never written to is the empty tree. */
  async getState(key: TreeKey): Promise<TreeState> {
    const rows = await this.readNodes(key, [{ level: TREE_DEPTH, idx: 0 }]);
    return { size: rows.size, leafCount: rows.leafCount, root: rows.hashes.get(nodeKey(TREE_DEPTH, 0)) ?? zeroHashes()[TREE_DEPTH]! };
  }

  /**
   * The leaf at `index`, its authentication path and the root, read in one statement (one
   * snapshot, so path and root always agree). Throws `MerkleLeafNotFoundError` for an empty index.
   */
  async getPath(key: TreeKey, index: number): Promise<MerklePath> {
    checkEntry({ index, leaf: 1n });
    const positions: NodePosition[] = [{ level: 0, idx: index }, { level: TREE_DEPTH, idx: 0 }];
    for (let level = 0; level < TREE_DEPTH; level++) positions.push({ level, idx: (index >> level) ^ 1 });
    const { size, leafCount, hashes } = await this.readNodes(key, positions);
    const leaf = hashes.get(nodeKey(0, index));
    if (leaf === undefined) throw new MerkleLeafNotFoundError(index);
    const zeros = zeroHashes();
    const pathElements: bigint[] = [];
    const pathIndices: number[] = [];
    for (let level = 0; level < TREE_DEPTH; level++) {
      pathElements.push(hashes.get(nodeKey(level, (index >> level) ^ 1)) ?? zeros[level]!);
      pathIndices.push((index >> level) & 1);
    }
    return { size, leafCount, root: hashes.get(nodeKey(TREE_DEPTH, 0))!, index, leaf, pathElements, pathIndices };
  }

  /** The runs of empty indices below `size` (inclusive bounds), oldest first: what to read from the portal's events. */
  async missingRanges(key: TreeKey): Promise<Array<{ from: number; to: number }>> {
    return missingLeafRanges(this.knex, key);
  }

  /** The tree's counters and the stored nodes among `positions`, in one statement. */
  private async readNodes(key: TreeKey, positions: readonly NodePosition[]) {
    const { size, leafCount, nodes } = await readMerkleNodes(this.knex, key, positions);
    const hashes = new Map<string, bigint>();
    for (const node of nodes) hashes.set(nodeKey(node.level, node.idx), BigInt(node.hash));
    return { size, leafCount, hashes };
  }
}
