import type { Chains, ChainTarget } from '../chains/chains.ts';
import type { MerkleTreeStore, TreeKey } from '../prover/merkle/store.ts';
import { TreeOutOfSyncError } from './lifecycle/errors.ts';

export interface TreeSyncInput {
  store: MerkleTreeStore;
  key: TreeKey;
  chain: ChainTarget;
  chains: Chains;
}

/**
 * Brings the mirrored tree of an order chain's portal level with the portal before a proof (the
 * chain kind's adapter reads the portal's log and root, agreed by the chain's provider quorum):
 * leaves nobody confirmed here are read from the portal's deposit events, then the root is checked
 * against the chain, so the proof's root is one the portal knows. Throws `TreeOutOfSyncError`
 * (retryable) when they still differ, `RpcUnavailableError`/`ChainUnavailableError` when the chain
 * cannot be read.
 */
export async function syncOrderTree(input: TreeSyncInput): Promise<void> {
  await input.chains.of(input.chain).syncOrderTree(input.store, input.key, (message) => new TreeOutOfSyncError(message));
}
