/** Which portal's tree: the order chain and its OrderPortal. */
export interface TreeKey { chainId: string; portalAddress: string }

/**
 * The mirrored tree of a portal as the tree sync needs it (prover/merkle/store.ts `MerkleTreeStore`
 * is one): its state, its gaps, and leaves added at their indices.
 */
export interface TreeMirror {
  getState(key: TreeKey): Promise<{ size: number; leafCount: number; root: bigint }>;
  missingRanges(key: TreeKey): Promise<Array<{ from: number; to: number }>>;
  insertLeaves(key: TreeKey, entries: readonly { index: number; leaf: bigint }[]): Promise<{ size: number; leafCount: number; root: bigint }>;
}
