import { Keypair, nativeToScVal, xdr } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChains } from '../chains/chains.ts';
import { fund } from '../devnet/stellar/client.ts';
import { MerkleTreeStore } from '../prover/merkle/store.ts';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { depositOnPortal, startSorobanTestNetwork, type PortalDeposit, type SorobanTestNetwork } from '../test/support/soroban-network.ts';
import { startSorobanRpcProxy, type SorobanRpcProxy } from '../test/support/soroban-rpc-proxy.ts';
import { TreeOutOfSyncError } from './lifecycle/errors.ts';
import { syncOrderTree } from './tree-sync.ts';

/**
 * Filling a Stellar portal's mirrored tree from its OrderCreated events and checking its root
 * against the portal's own, on the local Soroban network (devnet/stellar: three real deposits into
 * the OrderPortal's wasm). An RPC serving altered events is a rewriting proxy in front of the
 * network (a DOUBLE: the real network never does it).
 */

const bridger = Keypair.random();
let db: TestDatabase;
let store: MerkleTreeStore;
let net: SorobanTestNetwork;
let proxy: SorobanRpcProxy;
let portal: string;
const deposits: PortalDeposit[] = [];
const chains = createChains();

beforeAll(async () => {
  db = await createTestDatabase();
  store = new MerkleTreeStore(db.knex);
  net = await startSorobanTestNetwork();
  portal = net.deployment.orderPortal;
  await fund(net.server, bridger.publicKey());
  for (let i = 0; i < 3; i++) deposits.push(await depositOnPortal(net, bridger));
  proxy = await startSorobanRpcProxy(net.node.rpcUrl);
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await net?.stop();
  await db?.drop();
});

/** Syncs the tree stored under `treeKey` (one per test, all mirroring the same portal) through `rpcUrl`. */
const sync = (treeKey: string, rpcUrl = net.node.rpcUrl) => syncOrderTree({
  store, key: { chainId: treeKey, portalAddress: portal }, chain: { kind: 'STELLAR', chainId: '148', rpcUrl }, chains,
});
const key = (treeKey: string) => ({ chainId: treeKey, portalAddress: portal });

describe('syncOrderTree on a Stellar portal', () => {
  it('fills the leaves nobody confirmed here from the portal\'s events, then matches the portal\'s root', async () => {
    await store.insertLeaf(key('own-deposit'), 2, deposits[2]!.leaf); // only our own deposit, at index 2
    await sync('own-deposit');
    expect(await store.getState(key('own-deposit'))).toEqual({ size: 3, leafCount: 3, root: deposits[2]!.root });
  });

  it('refuses to prove over a tree built from events that do not add up to the portal\'s root (an RPC serving an altered leaf)', async () => {
    proxy.rewrites.getEvents = (result) => ({
      ...result,
      events: result.events.map((event: { value: string }, i: number) => {
        if (i !== 1) return event;
        const data = xdr.ScVal.fromXDR(event.value, 'base64');
        const leaf = data.map()!.find((entry) => entry.key().sym().toString() === 'leaf')!;
        leaf.val(nativeToScVal(12345n, { type: 'u256' }));
        return { ...event, value: data.toXDR('base64') };
      }),
    });
    try {
      await store.insertLeaf(key('altered'), 2, deposits[2]!.leaf);
      const error = await sync('altered', proxy.url).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TreeOutOfSyncError);
      expect((error as Error).message).toMatch(new RegExp(`differs from its portal \\(root ${deposits[2]!.root}\\)`));
    } finally {
      delete proxy.rewrites.getEvents;
    }
  });

  it('checks the root against the portal even when the mirrored tree has no gap (the portal decides, not our own tree)', async () => {
    await store.insertLeaves(key('no-gap'), [{ index: 0, leaf: 999n }, { index: 1, leaf: deposits[1]!.leaf }, { index: 2, leaf: deposits[2]!.leaf }]);
    const error = await sync('no-gap').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TreeOutOfSyncError);
    expect((error as Error).message).toMatch(new RegExp(`root ${deposits[2]!.root}`));
    await store.insertLeaves(key('no-gap-right'), deposits.map((d) => ({ index: d.leafIndex, leaf: d.leaf })));
    await sync('no-gap-right');
  });
});
