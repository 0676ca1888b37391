import { readFileSync } from 'node:fs';
import * as snarkjs from 'snarkjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifacts } from '../circuits/artifacts.ts';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { leafOf, nullifierHashOf, randomSecret, secretCommitment, splitOrderHash } from './commitments.ts';
import { MerkleTreeStore } from './merkle/store.ts';
import { buildProofInput, namePublicSignals } from './proof-input.ts';
import { ProverPool } from './pool.ts';
import { depositProver } from './prove-deposit.ts';

// The pieces the settlement flow chains together: the PostgreSQL tree's path feeds the circuit.
describe('a proof from the PostgreSQL tree', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
    await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
  });

  it('verifies for the deposit the tree holds, with the order hash halves and nullifier as public signals', async () => {
    const store = new MerkleTreeStore(db.knex);
    const key = { chainId: '31337', portalAddress: '0x00000000000000000000000000000000000000aa' };
    const others = Array.from({ length: 60 }, (_, index) => ({ index, leaf: leafOf(`0x${(index + 1).toString(16).padStart(64, '0')}`, secretCommitment(randomSecret())) }));
    await store.insertLeaves(key, others.filter((e) => e.index !== 37));
    const secret = randomSecret();
    const orderHash = `0x${'5a'.repeat(32)}`;
    await store.insertLeaf(key, 37, leafOf(orderHash, secretCommitment(secret)));

    const path = await store.getPath(key, 37);
    const input = buildProofInput({ secret, orderHash, path });
    const { proof, publicSignals } = await snarkjs.groth16.fullProve({ ...input }, artifacts.wasm, artifacts.zkey);
    const { hi, lo } = splitOrderHash(orderHash);
    expect(publicSignals).toEqual([path.root, hi, lo, nullifierHashOf(secret)].map(String));
    const vkey = JSON.parse(readFileSync(artifacts.verificationKey, 'utf8')) as object;
    expect(await snarkjs.groth16.verify(vkey, publicSignals, proof)).toBe(true);
  });

  it('proveDeposit mirrors the leaf, levels the tree, and names the root and nullifier of a verified proof', async () => {
    const store = new MerkleTreeStore(db.knex);
    const tree = { chainId: '31337', portalAddress: '0x00000000000000000000000000000000000000bb' };
    const secret = randomSecret();
    const orderHash = `0x${'6b'.repeat(32)}`;
    const leaf = { index: 3, leaf: leafOf(orderHash, secretCommitment(secret)) };
    // The portal's other deposits, as the tree sync reads them from the chain: filled before the path is read.
    const levelled: string[] = [];
    const level = async (key: typeof tree) => {
      levelled.push(key.portalAddress);
      return store.insertLeaves(key, [0, 1, 2].map((index) => ({ index, leaf: leafOf(`0x${(index + 9).toString(16).padStart(64, '0')}`, 7n) })));
    };
    const pool = new ProverPool({ size: 1, backend: 'snarkjs' });
    try {
      const proved = await depositProver({ store, pool: () => pool, level }).proveDeposit(tree, leaf, secret, orderHash);
      const state = await store.getState(tree);
      expect(levelled).toEqual([tree.portalAddress]);
      expect(proved.root).toBe(state.root.toString());
      expect(proved.nullifier).toBe(nullifierHashOf(secret).toString());
      expect(namePublicSignals(proved.publicSignals)).toMatchObject({ root: proved.root, nullifierHash: proved.nullifier });
      const vkey = JSON.parse(readFileSync(artifacts.verificationKey, 'utf8')) as object;
      expect(await snarkjs.groth16.verify(vkey, proved.publicSignals, proved.proof)).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('refuses public signals that are not the circuit\'s four, naming the count', () => {
    expect(() => namePublicSignals(['1', '2', '3'])).toThrow('publicSignals must hold 4 values, received 3');
  });
});
