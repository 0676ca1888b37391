import { randomBytes } from 'node:crypto';
import { buildPoseidon, type CircomlibPoseidon } from 'circomlibjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.ts';
import { FIELD_MODULUS } from '../field.ts';
import { MerkleLeafConflictError, MerkleLeafNotFoundError } from './errors.ts';
import { MerkleTreeStore, type TreeKey } from './store.ts';

const DEPTH = 20;

/**
 * An independent reference: circomlibjs's wasm Poseidon and a plain level-by-level build of the
 * whole depth-20 tree (absent leaves are 0), sharing no code with the store.
 */
class ReferenceTree {
  readonly zeros: bigint[] = [0n];
  constructor(private readonly h: (a: bigint, b: bigint) => bigint) {
    for (let i = 0; i < DEPTH; i++) this.zeros.push(h(this.zeros[i]!, this.zeros[i]!));
  }
  /** All levels of the tree holding `leaves` (sparse: undefined = empty). */
  levels(leaves: Array<bigint | undefined>): bigint[][] {
    const levels: bigint[][] = [Array.from(leaves, (x) => x ?? 0n)];
    for (let level = 0; level < DEPTH; level++) {
      const below = levels[level]!;
      const above: bigint[] = [];
      for (let i = 0; i < below.length; i += 2) above.push(this.h(below[i]!, below[i + 1] ?? this.zeros[level]!));
      if (above.length === 0) above.push(this.zeros[level + 1]!);
      levels.push(above);
    }
    return levels;
  }
  root(leaves: Array<bigint | undefined>): bigint {
    return leaves.length === 0 ? this.zeros[DEPTH]! : this.levels(leaves)[DEPTH]![0]!;
  }
}

const randomLeaf = () => (BigInt(`0x${randomBytes(32).toString('hex')}`) % (FIELD_MODULUS - 1n)) + 1n;
const randomInt = (n: number) => Math.floor(Math.random() * n);
let portalCounter = 0;
const newTree = (): TreeKey => ({ chainId: '31337', portalAddress: `0x${(++portalCounter).toString(16).padStart(40, '0')}` });

describe('MerkleTreeStore', () => {
  let db: TestDatabase;
  let store: MerkleTreeStore;
  let poseidon: CircomlibPoseidon;
  let reference: ReferenceTree;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new MerkleTreeStore(db.knex);
    poseidon = await buildPoseidon();
    reference = new ReferenceTree((a, b) => poseidon.F.toObject(poseidon([a, b])));
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('reports an untouched tree as the empty tree', async () => {
    expect(await store.getState(newTree())).toEqual({ size: 0, leafCount: 0, root: reference.zeros[DEPTH] });
  });

  it('matches the reference root after every single insert', async () => {
    const key = newTree();
    const leaves: bigint[] = [];
    for (let i = 0; i < 40; i++) {
      leaves.push(randomLeaf());
      const state = await store.insertLeaf(key, i, leaves[i]!);
      expect(state).toEqual({ size: i + 1, leafCount: i + 1, root: reference.root(leaves), inserted: 1 });
    }
  });

  it('matches the reference root and paths for a random tree of thousands of leaves inserted in shuffled batches', async () => {
    const key = newTree();
    const n = 2500 + randomInt(1500);
    const leaves = Array.from({ length: n }, randomLeaf);
    // Batches of random size taken from a shuffled order, so gaps open and close along the way.
    const order = [...leaves.keys()].sort(() => Math.random() - 0.5);
    for (let start = 0; start < n;) {
      const size = 1 + randomInt(400);
      await store.insertLeaves(key, order.slice(start, start + size).map((index) => ({ index, leaf: leaves[index]! })));
      start += size;
    }
    const levels = reference.levels(leaves);
    expect(await store.getState(key)).toEqual({ size: n, leafCount: n, root: levels[DEPTH]![0] });

    for (const index of [0, n - 1, ...Array.from({ length: 20 }, () => randomInt(n))]) {
      const path = await store.getPath(key, index);
      expect(path.leaf).toBe(leaves[index]);
      expect(path.root).toBe(levels[DEPTH]![0]);
      expect(path.pathElements).toEqual(levels.slice(0, DEPTH).map((level, l) => level[(index >> l) ^ 1] ?? reference.zeros[l]));
      expect(path.pathIndices).toEqual(Array.from({ length: DEPTH }, (_, l) => (index >> l) & 1));
    }
  });

  it('treats the same leaf at the same index as a no-op', async () => {
    const key = newTree();
    const leaf = randomLeaf();
    const first = await store.insertLeaf(key, 3, leaf);
    const again = await store.insertLeaves(key, [{ index: 3, leaf }, { index: 3, leaf }]);
    expect(again).toEqual({ ...first, inserted: 0 });
  });

  it('rejects a different leaf at a taken index and writes nothing of that batch', async () => {
    const key = newTree();
    const leaf = randomLeaf();
    const before = await store.insertLeaf(key, 0, leaf);
    const other = randomLeaf();
    const error = await store.insertLeaves(key, [{ index: 1, leaf: randomLeaf() }, { index: 0, leaf: other }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MerkleLeafConflictError);
    expect(error).toMatchObject({ index: 0, existing: leaf, attempted: other });
    expect(await store.getState(key)).toEqual({ size: before.size, leafCount: before.leafCount, root: before.root });
    await expect(store.insertLeaves(key, [{ index: 5, leaf: 1n }, { index: 5, leaf: 2n }])).rejects.toThrow(MerkleLeafConflictError);
  });

  it('rejects an out-of-range index, a zero leaf and a non-field leaf, naming the value', async () => {
    const key = newTree();
    await expect(store.insertLeaf(key, 2 ** DEPTH, 1n)).rejects.toThrow(/index must be an integer .* received '1048576'/);
    await expect(store.insertLeaf(key, -1, 1n)).rejects.toThrow(RangeError);
    await expect(store.insertLeaf(key, 0, 0n)).rejects.toThrow(/must be non-zero/);
    await expect(store.insertLeaf(key, 0, FIELD_MODULUS)).rejects.toThrow(/field element/);
  });

  it('loses no update under concurrent inserts into one tree', async () => {
    const key = newTree();
    const leaves = Array.from({ length: 60 }, randomLeaf);
    await Promise.all(leaves.map((leaf, index) => store.insertLeaf(key, index, leaf)));
    expect(await store.getState(key)).toEqual({ size: 60, leafCount: 60, root: reference.root(leaves) });
  });

  it('lists the gaps below the highest index, and the root counts them as empty leaves', async () => {
    const key = newTree();
    const leaves: Array<bigint | undefined> = [];
    for (const index of [0, 1, 5, 9]) {
      leaves[index] = randomLeaf();
      await store.insertLeaf(key, index, leaves[index]!);
    }
    expect(await store.missingRanges(key)).toEqual([{ from: 2, to: 4 }, { from: 6, to: 8 }]);
    expect(await store.getState(key)).toEqual({ size: 10, leafCount: 4, root: reference.root(leaves) });
    const late = newTree();
    await store.insertLeaf(late, 4, randomLeaf());
    expect(await store.missingRanges(late)).toEqual([{ from: 0, to: 3 }]);
  });

  it('keeps trees of different portals and chains apart', async () => {
    const a = newTree();
    const b = { ...a, chainId: '1' };
    const leaf = randomLeaf();
    await store.insertLeaf(a, 0, leaf);
    await store.insertLeaf(b, 0, randomLeaf());
    expect((await store.getState(a)).root).toBe(reference.root([leaf]));
    expect((await store.getState(b)).root).not.toBe(reference.root([leaf]));
  });

  it('refuses a path for an index that holds no leaf', async () => {
    const key = newTree();
    await store.insertLeaf(key, 0, randomLeaf());
    await expect(store.getPath(key, 1)).rejects.toThrow(MerkleLeafNotFoundError);
  });
});
