import type { Web3 } from 'web3';
import type { MirroredTreeState, TreeKey, TreeMirror } from '../tree-mirror.ts';
import type { Providers } from '../providers/providers.ts';
import { readPortalDeposits, readPortalRoot } from './portal.ts';
import { rpcCall } from './rpc.ts';

/**
 * Brings the mirrored tree of an EVM portal level with the portal: its root and leaf count (read at
 * one block by the quorum) must equal the tree's; gaps are filled from the portal's logs (also read by
 * the quorum), from the block the tree was last found level at (`marks`, only a hint: a read from it
 * that does not add up is done again from block 0). The tree's state is `known` (as the caller just
 * read it) or read in one statement; a tree with no gap (leaf count = size) that has the portal's leaves
 * is level when the roots agree. Returns the state found level; throws `treeDiffers(...)` when they
 * still differ.
 */
export async function syncEvmTree(input: {
  store: TreeMirror; key: TreeKey; providers: Providers<Web3>; marks: Map<string, bigint>; treeDiffers: (message: string) => Error;
  known?: MirroredTreeState;
}): Promise<MirroredTreeState> {
  const { store, key, providers, marks } = input;
  const differs = (ours: bigint, theirs: bigint) =>
    input.treeDiffers(`the mirrored tree of chain ${key.chainId} (root ${ours}) differs from its portal (root ${theirs})`);
  // Every fact at one block all providers have: root, leaf count and logs then belong together.
  const latest = await providers.read('blockNumber', async (web3) => BigInt(await rpcCall('eth_blockNumber', () => web3.eth.getBlockNumber())));
  const rootAt = (block: bigint) => providers.fact('portalRoot', (web3) => readPortalRoot(web3, key.portalAddress, block));
  const onChain = await rootAt(latest);
  let state = input.known ?? await store.getState(key);
  if (state.leafCount === state.size && state.size >= onChain.leafCount) {
    if (state.root !== onChain.root) throw differs(state.root, onChain.root);
    return state;
  }
  const mark = `${key.chainId}:${key.portalAddress.toLowerCase()}`;
  // Reads the portal's log from the last block found level (or its whole log: fine for the devnet
  // and young portals; a production portal would page from its deployment block).
  const readFrom = async (from: bigint) => {
    const deposits = await providers.fact('portalLogs', (web3) => readPortalDeposits(web3, key.portalAddress, from, latest));
    state = await store.insertLeaves(key, deposits.map((d) => ({ index: d.leafIndex, leaf: d.leaf })));
    return state.root === onChain.root && state.leafCount === onChain.leafCount;
  };
  const since = marks.get(mark);
  const from = since !== undefined && since < latest ? since + 1n : undefined;
  let level = await readFrom(from ?? 0n);
  if (!level && from !== undefined) {
    marks.delete(mark);
    level = await readFrom(0n);
  }
  if (!level) throw differs(state.root, onChain.root);
  marks.set(mark, latest);
  return state;
}
