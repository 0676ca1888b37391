import { readFileSync } from 'node:fs';
import * as snarkjs from 'snarkjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifacts } from '../../circuits/artifacts.ts';
import { splitOrderHash } from '../../prover/commitments.ts';
import type { Groth16Proof } from '../../prover/solidity.ts';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.ts';
import { PARAMS_RS, renderParams } from './codegen.ts';
import { buildVectors, deterministicPart, VECTORS_JSON, type Vectors } from './vectors.ts';

/**
 * The Rust tests read committed files (vectors.json, shared/src/params.rs) so `cargo test` needs
 * nothing else; these tests fail when either no longer matches what the TypeScript side makes.
 */
const committed = JSON.parse(readFileSync(VECTORS_JSON, 'utf8')) as Vectors;

/** Decodes prover/solidity.ts `encodeProof` bytes back into snarkjs's proof object. */
function decodeProof(hex: string): Groth16Proof {
  const w = hex.slice(2).match(/.{64}/g)!.map((word) => BigInt(`0x${word}`).toString());
  expect(w).toHaveLength(8);
  return {
    pi_a: [w[0]!, w[1]!, '1'],
    pi_b: [[w[3]!, w[2]!], [w[5]!, w[4]!], ['1', '0']],
    pi_c: [w[6]!, w[7]!, '1'],
    protocol: 'groth16',
    curve: 'bn128',
  };
}

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
});

describe('contracts/soroban committed inputs', () => {
  it('params.rs is what codegen renders from circomlibjs, the prover and the verification key', () => {
    expect(readFileSync(PARAMS_RS, 'utf8') === renderParams(), 'run `npx tsx contracts/soroban/codegen.ts` and commit').toBe(true);
  });

  it('vectors.json is what vectors.ts builds now (signatures, hashes, MerkleTreeStore roots), proofs aside', async () => {
    const fresh = await buildVectors(db.knex, null);
    expect(deterministicPart(committed), 'run `npx tsx tools/soroban-vectors.ts` and commit').toEqual(deterministicPart(fresh));
  });

  it('its proofs verify against the committed verification key for the signed root, order hash and nullifier', async () => {
    const vkey = JSON.parse(readFileSync(artifacts.verificationKey, 'utf8'));
    const ad = committed.adManager;
    const our = committed.orderPortal.deposits[committed.orderPortal.ours]!;
    const cases = [
      { proof: ad.proof!, root: ad.targetRoot, orderHash: ad.order.hash, nullifier: ad.nullifierHash },
      { proof: committed.orderPortal.proof!, root: committed.orderPortal.targetRoot, orderHash: our.order.hash, nullifier: our.nullifierHash },
    ];
    for (const { proof, root, orderHash, nullifier } of cases) {
      const { hi, lo } = splitOrderHash(orderHash);
      const signals = [root, hi.toString(), lo.toString(), nullifier];
      expect(proof.publicSignals).toEqual(signals);
      expect(await snarkjs.groth16.verify(vkey, signals, decodeProof(proof.proof))).toBe(true);
    }
  });
});
