import { readFileSync } from 'node:fs';
import * as snarkjs from 'snarkjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifacts } from '../circuits/artifacts.ts';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { leafOf, nullifierHashOf, randomSecret, secretCommitment, splitOrderHash } from './commitments.ts';
import { MerkleTreeStore } from './merkle/store.ts';
import { buildProofInput } from './proof-input.ts';

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
});
