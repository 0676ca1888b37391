import type { Knex } from 'knex';
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
/** Rows per upsert statement: arrays are passed whole (unnest), so this only bounds statement size. */
const UPSERT_CHUNK = 10_000;

interface NodeRow { level: number; idx: number; hash: string }
interface TreeRow { id: number; size: number; leaf_count: number }

function checkEntry({ index, leaf }: LeafEntry): void {
  if (!Number.isInteger(index) || index < 0 || index >= CAPACITY) {
    throw new RangeError(`index must be an integer in [0, ${CAPACITY}), received '${index}'`);
  }
  assertField(leaf, `leaf at index ${index}`);
  // An empty slot and a zero leaf would be indistinguishable; a real leaf is a Poseidon output.
  if (leaf === 0n) throw new RangeError(`leaf at index ${index} must be non-zero, received '0'`);
}

/**
 * A PostgreSQL array literal of integers or decimal strings. knex expands a JS array binding into
 * a comma list, so arrays travel as one text parameter cast in SQL (`?::int[]`).
 */
const pgArray = (values: ReadonlyArray<number | string>): string => `{${values.join(',')}}`;

/** The nodes at `positions` as two array parameters (levels, indices) for `unnest(?::smallint[], ?::int[])`. */
const positionsFilter = (positions: readonly NodePosition[]) => [pgArray(positions.map((p) => p.level)), pgArray(positions.map((p) => p.idx))];

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
      await trx.raw(`INSERT INTO merkle_trees (chain_id, portal_address) VALUES (?, ?) ON CONFLICT DO NOTHING`, [key.chainId, key.portalAddress]);
      const tree: TreeRow = (await trx.raw(
        `SELECT id, size, leaf_count FROM merkle_trees WHERE chain_id = ? AND portal_address = ? FOR UPDATE`,
        [key.chainId, key.portalAddress],
      )).rows[0];

      const { rows: existing } = await trx.raw<{ rows: NodeRow[] }>(
        `SELECT idx, hash FROM merkle_nodes WHERE tree_id = ? AND level = 0 AND idx = ANY(?::int[])`,
        [tree.id, pgArray([...batch.keys()])],
      );
      for (const row of existing) {
        const stored = BigInt(row.hash);
        if (stored !== batch.get(row.idx)) throw new MerkleLeafConflictError(row.idx, stored, batch.get(row.idx)!);
        batch.delete(row.idx);
      }
      if (batch.size === 0) {
        const root = await this.readRoot(trx, tree.id);
        return { size: tree.size, leafCount: tree.leaf_count, root, inserted: 0 };
      }

      const needed = siblingsNeeded(batch.keys());
      const stored = new Map<string, bigint>();
      const { rows: siblings } = await trx.raw<{ rows: NodeRow[] }>(
        `SELECT level, idx, hash FROM merkle_nodes
          WHERE tree_id = ? AND (level, idx) IN (SELECT * FROM unnest(?::smallint[], ?::int[]))`,
        [tree.id, ...positionsFilter(needed)],
      );
      for (const row of siblings) stored.set(nodeKey(row.level, row.idx), BigInt(row.hash));

      const nodes = recomputeAncestors(batch, stored);
      for (let start = 0; start < nodes.length; start += UPSERT_CHUNK) {
        const chunk = nodes.slice(start, start + UPSERT_CHUNK);
        await trx.raw(
          `INSERT INTO merkle_nodes (tree_id, level, idx, hash)
           SELECT ?, * FROM unnest(?::smallint[], ?::int[], ?::numeric[])
           ON CONFLICT (tree_id, level, idx) DO UPDATE SET hash = EXCLUDED.hash`,
          [tree.id, ...positionsFilter(chunk), pgArray(chunk.map((n) => n.hash.toString()))],
        );
      }
      let size = tree.size;
      for (const index of batch.keys()) size = Math.max(size, index + 1);
      const leafCount = tree.leaf_count + batch.size;
      await trx.raw(`UPDATE merkle_trees SET size = ?, leaf_count = ?, updated_at = now() WHERE id = ?`, [size, leafCount, tree.id]);
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
    const { rows } = await this.knex.raw<{ rows: Array<{ from: number; to: number }> }>(
      `WITH leaves AS (
         SELECT n.idx, lag(n.idx) OVER (ORDER BY n.idx) AS prev
           FROM merkle_nodes n JOIN merkle_trees t ON t.id = n.tree_id
          WHERE t.chain_id = ? AND t.portal_address = ? AND n.level = 0)
       SELECT coalesce(prev, -1) + 1 AS "from", idx - 1 AS "to" FROM leaves
        WHERE idx - coalesce(prev, -1) > 1 ORDER BY idx`,
      [key.chainId, key.portalAddress],
    );
    return rows;
  }

  private async readRoot(trx: Knex.Transaction, treeId: number): Promise<bigint> {
    const { rows } = await trx.raw<{ rows: NodeRow[] }>(`SELECT hash FROM merkle_nodes WHERE tree_id = ? AND level = ? AND idx = 0`, [treeId, TREE_DEPTH]);
    return rows[0] ? BigInt(rows[0].hash) : zeroHashes()[TREE_DEPTH]!;
  }

  /** The tree's counters and the stored nodes among `positions`, in one statement. */
  private async readNodes(key: TreeKey, positions: readonly NodePosition[]) {
    const { rows } = await this.knex.raw<{ rows: Array<{ size: number; leaf_count: number } & Partial<NodeRow>> }>(
      `WITH t AS (SELECT id, size, leaf_count FROM merkle_trees WHERE chain_id = ? AND portal_address = ?)
       SELECT t.size, t.leaf_count, n.level, n.idx, n.hash FROM t
         LEFT JOIN merkle_nodes n ON n.tree_id = t.id
          AND (n.level, n.idx) IN (SELECT * FROM unnest(?::smallint[], ?::int[]))`,
      [key.chainId, key.portalAddress, ...positionsFilter(positions)],
    );
    const hashes = new Map<string, bigint>();
    for (const row of rows) if (row.hash != null) hashes.set(nodeKey(row.level!, row.idx!), BigInt(row.hash));
    return { size: rows[0]?.size ?? 0, leafCount: rows[0]?.leaf_count ?? 0, hashes };
  }
}
