import type { MerkleTreeStore, TreeKey, LeafEntry, TreeState } from './merkle/store.ts';
import type { ProverPool } from './pool.ts';
import { buildProofInput, namePublicSignals } from './proof-input.ts';
import type { Groth16Proof } from './solidity.ts';

/** What proving a deposit takes: the mirrored trees, the proof pool, and how a tree is brought level with its portal on chain. */
export interface DepositProverDeps {
  store: MerkleTreeStore;
  /** The proof pool (started on first use). */
  pool: () => ProverPool;
  /**
   * Brings the mirrored tree `key` level with its portal (leaves nobody confirmed here read from the
   * chain, the root checked against it) and returns its state found level, or throws: a proof is only
   * made under a root the portal knows. `known`: the state read with the path (not read again).
   */
  level: (key: TreeKey, known: TreeState) => Promise<TreeState>;
}

/** A verified deposit proof with what the unlocks need of it by name. */
export interface DepositProof {
  proof: Groth16Proof;
  /** In the circuit's order, as verifiers take them. */
  publicSignals: string[];
  /** The tree root the proof is made under (decimal string). */
  root: string;
  /** The deposit's nullifier hash (decimal string): spent by the first unlock. */
  nullifier: string;
}

/** The deposit prover: `proveDeposit` is the one way trades/ asks for a proof. */
export interface DepositProver {
  /**
   * Proves that `leaf` (the deposit of `orderHash` made with `secret`) sits in `tree`: the leaf is
   * mirrored, the tree brought level with its portal, the path read, the witness built, the proof made
   * and verified. Throws the prover's typed errors (prover/errors.ts), `MerkleLeafConflictError` when the
   * index holds another leaf, and whatever `level` throws.
   */
  proveDeposit(tree: TreeKey, leaf: LeafEntry, secret: bigint, orderHash: string): Promise<DepositProof>;
}

/** The deposit prover over `deps`. */
export function depositProver(deps: DepositProverDeps): DepositProver {
  return {
    async proveDeposit(tree, leaf, secret, orderHash) {
      await deps.store.insertLeaf(tree, leaf.index, leaf.leaf);
      // The path and the tree's state in one read; the sync checks that very root against the portal,
      // so the path is read again only when the sync had to add leaves (the root changed).
      let path = await deps.store.getPath(tree, leaf.index);
      const level = await deps.level(tree, path);
      if (level.root !== path.root) path = await deps.store.getPath(tree, leaf.index);
      const { proof, publicSignals } = await deps.pool().prove(buildProofInput({ secret, orderHash, path }));
      const named = namePublicSignals(publicSignals);
      return { proof, publicSignals, root: named.root, nullifier: named.nullifierHash };
    },
  };
}
