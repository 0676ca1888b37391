/** Which portal's tree: the order chain and its OrderPortal. */
export interface TreeKey { chainId: string; portalAddress: string }

/** A mirrored tree at one instant: `size` = highest leaf index + 1; `leafCount < size` means a gap to fill from the chain. */
export interface MirroredTreeState { size: number; leafCount: number; root: bigint }

/**
 * The mirrored tree of a portal as the tree sync needs it (prover/merkle/store.ts `MerkleTreeStore`
 * is one): its state (one statement), and leaves added at their indices.
 */
export interface TreeMirror {
  getState(key: TreeKey): Promise<MirroredTreeState>;
  insertLeaves(key: TreeKey, entries: readonly { index: number; leaf: bigint }[]): Promise<MirroredTreeState>;
}
