import type { rpc } from '@stellar/stellar-sdk';
import type { Web3 } from 'web3';
import { RpcUnavailableError } from '../chains/errors.ts';
import { readPortalDeposits, readPortalRoot } from '../chains/evm/portal.ts';
import { readStellarPortalDeposits, readStellarPortalRoot } from '../chains/stellar/portal.ts';
import type { ChainConnection } from '../db/repositories/registry-cache.ts';
import type { MerkleTreeStore, TreeKey } from '../prover/merkle/store.ts';
import { TreeOutOfSyncError } from './lifecycle/errors.ts';

export interface TreeSyncInput {
  store: MerkleTreeStore;
  key: TreeKey;
  chain: Pick<ChainConnection, 'kind' | 'chainId'> & { rpcUrl: string };
  evmClient: (rpcUrl: string) => Web3;
  stellarClient: (rpcUrl: string) => rpc.Server;
}

/**
 * Brings the mirrored tree of an order chain's portal level with the portal before a proof: leaves
 * nobody confirmed here are read from the portal's deposit events, then the root is checked against
 * the chain once, so the proof's root is one the portal knows. Throws `TreeOutOfSyncError`
 * (retryable) when they still differ, `RpcUnavailableError` when the chain cannot be read.
 */
export async function syncOrderTree(input: TreeSyncInput): Promise<void> {
  if (input.chain.kind === 'EVM') return syncEvmTree(input.store, input.evmClient(input.chain.rpcUrl), input.key);
  return syncStellarTree(input.store, input.stellarClient(input.chain.rpcUrl), input.key);
}

const differs = (key: TreeKey, ours: bigint, theirs: bigint) =>
  new TreeOutOfSyncError(`the mirrored tree of chain ${key.chainId} (root ${ours}) differs from its portal (root ${theirs})`);

/**
 * The block up to which each EVM tree (per store, per chain and portal) was last found level with its
 * portal in this process: the next sync reads the portal's logs after it, not from block 0 again
 * (with 25 trades in flight nearly every proof finds the tree behind: each read the whole log).
 * Only a hint: a read from it that does not add up to the portal's root is done again from block 0.
 */
const syncedUpTo = new WeakMap<MerkleTreeStore, Map<string, bigint>>();

/** EVM: the portal's current root and leaf count are read with eth_call; gaps from its logs. */
async function syncEvmTree(store: MerkleTreeStore, web3: Web3, key: TreeKey): Promise<void> {
  const onChain = await readPortalRoot(web3, key.portalAddress);
  let state = await store.getState(key);
  if ((await store.missingRanges(key)).length === 0 && state.size >= onChain.leafCount) {
    if (state.root !== onChain.root) throw differs(key, state.root, onChain.root);
    return;
  }
  const marks = syncedUpTo.get(store) ?? new Map<string, bigint>();
  syncedUpTo.set(store, marks);
  const mark = `${key.chainId}:${key.portalAddress.toLowerCase()}`;
  const latest = BigInt(await web3.eth.getBlockNumber());
  // Reads the portal's log from the last block found level (or its whole log: fine for the devnet
  // and young portals; a production portal would page from its deployment block).
  const readFrom = async (from: bigint) => {
    const deposits = await readPortalDeposits(web3, key.portalAddress, from, latest);
    state = await store.insertLeaves(key, deposits.map((d) => ({ index: d.leafIndex, leaf: d.leaf })));
    const now = await readPortalRoot(web3, key.portalAddress, latest);
    return { now, level: state.root === now.root && state.leafCount === now.leafCount };
  };
  const since = marks.get(mark);
  const from = since !== undefined && since < latest ? since + 1n : undefined;
  let read = await readFrom(from ?? 0n);
  if (!read.level && from !== undefined) {
    marks.delete(mark);
    read = await readFrom(0n);
  }
  if (!read.level) throw differs(key, state.root, read.now.root);
  marks.set(mark, latest);
}

/**
 * Stellar, as on EVM: the portal's root and leaf count are read (simulated `current_root` and
 * `next_leaf_index`) and must equal the mirrored tree's before every proof; gaps are first filled
 * from the portal's OrderCreated events within the RPC's retention window.
 */
async function syncStellarTree(store: MerkleTreeStore, server: rpc.Server, key: TreeKey): Promise<void> {
  const onChain = await readStellarPortalRoot(server, key.portalAddress);
  let state = await store.getState(key);
  if ((await store.missingRanges(key)).length === 0 && state.size >= onChain.leafCount) {
    if (state.root !== onChain.root) throw differs(key, state.root, onChain.root);
    return;
  }
  let window: { oldest: number; latest: number };
  try {
    const health = await server.getHealth();
    window = { oldest: health.oldestLedger, latest: health.latestLedger };
  } catch (error) {
    throw new RpcUnavailableError(`Soroban RPC failed on getHealth: ${(error as Error).message}`, { cause: error });
  }
  const deposits = await readStellarPortalDeposits(server, key.portalAddress, window.oldest, window.latest);
  state = await store.insertLeaves(key, deposits.map((d) => ({ index: d.leafIndex, leaf: d.leaf })));
  if (state.leafCount !== state.size) throw new TreeOutOfSyncError(`the tree of chain ${key.chainId} has gaps older than its RPC keeps`);
  const now = await readStellarPortalRoot(server, key.portalAddress);
  if (state.root !== now.root || state.leafCount !== now.leafCount) throw differs(key, state.root, now.root);
}
