import type { Knex } from 'knex';

/** A node of a mirrored tree: level 0 holds the leaves; hashes as decimal strings (numeric). */
export interface MerkleNodeRow { level: number; idx: number; hash: string }

/** A tree's row: its id and counters (`size` = highest leaf index + 1, `leaf_count` leaves stored). */
export interface MerkleTreeRow { id: number; size: number; leafCount: number }

/** Names one tree: an OrderPortal on an order chain. */
export interface MerkleTreeName { chainId: string; portalAddress: string }

/**
 * A PostgreSQL array literal of integers or decimal strings. knex expands a JS array binding into
 * a comma list, so arrays travel as one text parameter cast in SQL (`?::int[]`).
 */
const pgArray = (values: ReadonlyArray<number | string>): string => `{${values.join(',')}}`;

/** Positions as two array parameters (levels, indices) for `unnest(?::smallint[], ?::int[])`. */
const positionsFilter = (positions: ReadonlyArray<{ level: number; idx: number }>) =>
  [pgArray(positions.map((p) => p.level)), pgArray(positions.map((p) => p.idx))];

/** The tree's row, created when missing, locked for the rest of `trx`: writers of one tree go one at a time. */
export async function lockMerkleTree(trx: Knex.Transaction, tree: MerkleTreeName): Promise<MerkleTreeRow> {
  await trx.raw(`INSERT INTO merkle_trees (chain_id, portal_address) VALUES (?, ?) ON CONFLICT DO NOTHING`, [tree.chainId, tree.portalAddress]);
  const row = (await trx.raw(
    `SELECT id, size, leaf_count FROM merkle_trees WHERE chain_id = ? AND portal_address = ? FOR UPDATE`,
    [tree.chainId, tree.portalAddress],
  )).rows[0];
  return { id: row.id, size: row.size, leafCount: row.leaf_count };
}

/** The stored leaves among `indices`. */
export async function storedLeaves(trx: Knex.Transaction, treeId: number, indices: readonly number[]): Promise<MerkleNodeRow[]> {
  const { rows } = await trx.raw<{ rows: MerkleNodeRow[] }>(
    `SELECT 0 AS level, idx, hash FROM merkle_nodes WHERE tree_id = ? AND level = 0 AND idx = ANY(?::int[])`,
    [treeId, pgArray(indices)],
  );
  return rows;
}

/** The stored nodes among `positions`. */
export async function storedNodes(trx: Knex.Transaction, treeId: number, positions: ReadonlyArray<{ level: number; idx: number }>): Promise<MerkleNodeRow[]> {
  const { rows } = await trx.raw<{ rows: MerkleNodeRow[] }>(
    `SELECT level, idx, hash FROM merkle_nodes
      WHERE tree_id = ? AND (level, idx) IN (SELECT * FROM unnest(?::smallint[], ?::int[]))`,
    [treeId, ...positionsFilter(positions)],
  );
  return rows;
}

/** Rows per upsert statement: arrays are passed whole (unnest), so this only bounds statement size. */
const UPSERT_CHUNK = 10_000;

/** Writes `nodes` (inserted, or replacing the hash at their position) and the tree's new counters. */
export async function writeMerkleNodes(
  trx: Knex.Transaction, treeId: number, nodes: ReadonlyArray<{ level: number; idx: number; hash: bigint }>, counters: { size: number; leafCount: number },
): Promise<void> {
  for (let start = 0; start < nodes.length; start += UPSERT_CHUNK) {
    const chunk = nodes.slice(start, start + UPSERT_CHUNK);
    await trx.raw(
      `INSERT INTO merkle_nodes (tree_id, level, idx, hash)
       SELECT ?, * FROM unnest(?::smallint[], ?::int[], ?::numeric[])
       ON CONFLICT (tree_id, level, idx) DO UPDATE SET hash = EXCLUDED.hash`,
      [treeId, ...positionsFilter(chunk), pgArray(chunk.map((n) => n.hash.toString()))],
    );
  }
  await trx.raw(`UPDATE merkle_trees SET size = ?, leaf_count = ?, updated_at = now() WHERE id = ?`, [counters.size, counters.leafCount, treeId]);
}

/** The stored root hash of a tree at `depth`, or undefined while the tree is empty. */
export async function storedRoot(trx: Knex.Transaction, treeId: number, depth: number): Promise<string | undefined> {
  const { rows } = await trx.raw<{ rows: MerkleNodeRow[] }>(`SELECT hash FROM merkle_nodes WHERE tree_id = ? AND level = ? AND idx = 0`, [treeId, depth]);
  return rows[0]?.hash;
}

/** The runs of empty leaf indices below the highest stored one (inclusive bounds), oldest first. */
export async function missingLeafRanges(knex: Knex, tree: MerkleTreeName): Promise<Array<{ from: number; to: number }>> {
  const { rows } = await knex.raw<{ rows: Array<{ from: number; to: number }> }>(
    `WITH leaves AS (
       SELECT n.idx, lag(n.idx) OVER (ORDER BY n.idx) AS prev
         FROM merkle_nodes n JOIN merkle_trees t ON t.id = n.tree_id
        WHERE t.chain_id = ? AND t.portal_address = ? AND n.level = 0)
     SELECT coalesce(prev, -1) + 1 AS "from", idx - 1 AS "to" FROM leaves
      WHERE idx - coalesce(prev, -1) > 1 ORDER BY idx`,
    [tree.chainId, tree.portalAddress],
  );
  return rows;
}

/** The tree's counters and its stored nodes among `positions`, in one statement (one snapshot). */
export async function readMerkleNodes(
  knex: Knex, tree: MerkleTreeName, positions: ReadonlyArray<{ level: number; idx: number }>,
): Promise<{ size: number; leafCount: number; nodes: MerkleNodeRow[] }> {
  const { rows } = await knex.raw<{ rows: Array<{ size: number; leaf_count: number } & Partial<MerkleNodeRow>> }>(
    `WITH t AS (SELECT id, size, leaf_count FROM merkle_trees WHERE chain_id = ? AND portal_address = ?)
     SELECT t.size, t.leaf_count, n.level, n.idx, n.hash FROM t
       LEFT JOIN merkle_nodes n ON n.tree_id = t.id
        AND (n.level, n.idx) IN (SELECT * FROM unnest(?::smallint[], ?::int[]))`,
    [tree.chainId, tree.portalAddress, ...positionsFilter(positions)],
  );
  const nodes: MerkleNodeRow[] = [];
  for (const row of rows) if (row.hash != null) nodes.push({ level: row.level!, idx: row.idx!, hash: row.hash });
  return { size: rows[0]?.size ?? 0, leafCount: rows[0]?.leaf_count ?? 0, nodes };
}
