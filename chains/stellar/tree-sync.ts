import type { rpc } from '@stellar/stellar-sdk';
import type { MirroredTreeState, TreeKey, TreeMirror } from '../tree-mirror.ts';
import { RpcUnavailableError } from '../errors.ts';
import type { Providers } from '../providers/providers.ts';
import { readStellarPortalDeposits, readStellarPortalRoot } from './portal.ts';

/**
 * Stellar, as on EVM: the portal's root and leaf count (simulated `current_root` and
 * `next_leaf_index`, read by the quorum) must equal the mirrored tree's before every proof; gaps are
 * first filled from the portal's OrderCreated events (read by the quorum) within the RPC's retention
 * window. The tree's state is `known` (as the caller just read it) or read in one statement. Returns the
 * state found level; throws `treeDiffers(...)` when they still differ.
 */
export async function syncStellarTree(input: {
  store: TreeMirror; key: TreeKey; providers: Providers<rpc.Server>; treeDiffers: (message: string) => Error; known?: MirroredTreeState;
}): Promise<MirroredTreeState> {
  const { store, key, providers } = input;
  const differs = (ours: bigint, theirs: bigint) =>
    input.treeDiffers(`the mirrored tree of chain ${key.chainId} (root ${ours}) differs from its portal (root ${theirs})`);
  const rootNow = () => providers.fact('portalRoot', (server) => readStellarPortalRoot(server, key.portalAddress));
  const onChain = await rootNow();
  const state = input.known ?? await store.getState(key);
  if (state.leafCount === state.size && state.size >= onChain.leafCount) {
    if (state.root !== onChain.root) throw differs(state.root, onChain.root);
    return state;
  }
  const window = await providers.read('getHealth', async (server) => {
    try {
      const health = await server.getHealth();
      return { oldest: health.oldestLedger, latest: health.latestLedger };
    } catch (error) {
      throw new RpcUnavailableError(`Soroban RPC failed on getHealth: ${(error as Error).message}`, { cause: error });
    }
  });
  const deposits = await providers.fact('portalEvents', (server) => readStellarPortalDeposits(server, key.portalAddress, window.oldest, window.latest));
  const filled = await store.insertLeaves(key, deposits.map((d) => ({ index: d.leafIndex, leaf: d.leaf })));
  if (filled.leafCount !== filled.size) throw input.treeDiffers(`the tree of chain ${key.chainId} has gaps older than its RPC keeps`);
  const now = await rootNow();
  if (filled.root !== now.root || filled.leafCount !== now.leafCount) throw differs(filled.root, now.root);
  return filled;
}
