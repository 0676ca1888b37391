import type { Chains, ChainTarget } from '../chains/chains.ts';
import type { MirroredTreeState } from '../chains/tree-mirror.ts';
import type { MerkleTreeStore, TreeKey } from '../prover/merkle/store.ts';
import { TreeOutOfSyncError } from './lifecycle/errors.ts';

export interface TreeSyncInput {
  store: MerkleTreeStore;
  key: TreeKey;
  chain: ChainTarget;
  chains: Chains;
  /** The tree's state as the caller just read it (with the proof's path): not read again unless leaves are added. */
  known?: MirroredTreeState;
}

/**
 * Brings the mirrored tree of an order chain's portal level with the portal before a proof (the
 * chain kind's adapter reads the portal's log and root, agreed by the chain's provider quorum):
 * leaves nobody confirmed here are read from the portal's deposit events, then the root is checked
 * against the chain, so the proof's root is one the portal knows. Returns the tree's state found level.
 * Throws `TreeOutOfSyncError` (retryable) when they still differ, `RpcUnavailableError`/`ChainUnavailableError`
 * when the chain cannot be read.
 */
export async function syncOrderTree(input: TreeSyncInput): Promise<MirroredTreeState> {
  return input.chains.of(input.chain).syncOrderTree(input.store, input.key, (message) => new TreeOutOfSyncError(message), input.known);
}
