import { SorobanDataBuilder, StrKey, TransactionBuilder, nativeToScVal, xdr } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedChainClients } from '../chains/verify.ts';
import { MerkleTreeStore } from '../prover/merkle/store.ts';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { startSorobanRpcStub, type SorobanRpcStub } from '../test/support/fake-soroban-rpc.ts';
import { TreeOutOfSyncError } from './lifecycle-errors.ts';
import { syncOrderTree } from './tree-sync.ts';

/**
 * Filling a Stellar portal's tree from its OrderCreated events and checking its root against the
 * portal's (real ScVal XDR served by the RPC double, so the portal can report what a test needs;
 * devnet/stellar/stellar-devnet.test.ts reads a deployed portal's root on the real host).
 */

const portal = StrKey.encodeContract(Buffer.alloc(32, 7));
const leafOf = (index: number) => 1000n + BigInt(index);

function rawDeposit(index: number, root: bigint, contractId = portal) {
  const bytes = (byte: number) => xdr.ScVal.scvBytes(Buffer.alloc(32, byte)).toXDR('base64');
  const value = xdr.ScVal.scvMap(
    [['leaf', nativeToScVal(leafOf(index), { type: 'u256' })], ['leafIndex', nativeToScVal(index, { type: 'u32' })],
      ['root', nativeToScVal(root, { type: 'u256' })], ['secretCommitment', nativeToScVal(7n, { type: 'u256' })]]
      .map(([key, val]) => new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol(key as string), val: val as xdr.ScVal })),
  );
  return {
    type: 'contract', ledger: 100 + index, ledgerClosedAt: '2026-11-22T00:00:00Z', contractId, id: `${100 + index}-0`,
    pagingToken: `${100 + index}-0`, inSuccessfulContractCall: true, txHash: 'ab'.repeat(32),
    topic: [xdr.ScVal.scvSymbol('OrderCreated').toXDR('base64'), bytes(0x10 + index), bytes(0x20 + index)], value: value.toXDR('base64'),
  };
}

let db: TestDatabase;
let store: MerkleTreeStore;
let stub: SorobanRpcStub;
let served: ReturnType<typeof rawDeposit>[] = [];
/** What the portal's `current_root` and `next_leaf_index` views answer, per portal. */
const portalViews = new Map<string, { root: bigint; leafCount: number }>();
const PASSPHRASE = 'Test SDF Network ; September 2015';
const clients = cachedChainClients();

beforeAll(async () => {
  db = await createTestDatabase();
  store = new MerkleTreeStore(db.knex);
  stub = await startSorobanRpcStub();
  stub.handlers.getHealth = () => ({ status: 'healthy', latestLedger: 200, oldestLedger: 50, ledgerRetentionWindow: 150 });
  stub.handlers.getEvents = () => ({ events: served, cursor: 'end', latestLedger: 200, oldestLedger: 50, latestLedgerCloseTime: '0', oldestLedgerCloseTime: '0' });
  stub.handlers.getNetwork = () => ({ passphrase: PASSPHRASE, protocolVersion: 25 });
  stub.handlers.simulateTransaction = ({ transaction }) => {
    const tx = TransactionBuilder.fromXDR(String(transaction), PASSPHRASE) as ReturnType<TransactionBuilder['build']>;
    const call = tx.operations[0] as unknown as { func: xdr.HostFunction };
    const invoked = call.func.invokeContract();
    const contract = StrKey.encodeContract(invoked.contractAddress().contractId() as unknown as Buffer);
    const view = portalViews.get(contract) ?? { root: 0n, leafCount: 0 };
    const value = invoked.functionName().toString() === 'current_root'
      ? nativeToScVal(view.root, { type: 'u256' }) : nativeToScVal(view.leafCount, { type: 'u32' });
    return { latestLedger: 200, minResourceFee: '0', transactionData: new SorobanDataBuilder().build().toXDR('base64'), results: [{ auth: [], xdr: value.toXDR('base64') }], events: [] };
  };
});

afterAll(async () => {
  await stub?.close();
  await db?.drop();
});

/** The root a tree of leaves 0..n-1 has, computed by a store of its own. */
async function rootOf(n: number): Promise<bigint> {
  const key = { chainId: 'reference', portalAddress: `ref-${n}` };
  return (await store.insertLeaves(key, Array.from({ length: n }, (_, i) => ({ index: i, leaf: leafOf(i) })))).root;
}

const sync = (portalAddress: string) => syncOrderTree({
  store, key: { chainId: '148', portalAddress }, chain: { kind: 'STELLAR', chainId: '148', rpcUrl: stub.url }, evmClient: clients.evm, stellarClient: clients.stellar,
});

describe('syncOrderTree on a Stellar portal', () => {
  it('fills the leaves nobody confirmed here from the portal events, then matches the portal root', async () => {
    served = await Promise.all([0, 1, 2].map(async (i) => rawDeposit(i, await rootOf(i + 1))));
    portalViews.set(portal, { root: await rootOf(3), leafCount: 3 });
    const key = { chainId: '148', portalAddress: portal };
    await store.insertLeaf(key, 2, leafOf(2)); // only our own deposit, at index 2
    await sync(portal);
    expect(await store.getState(key)).toEqual({ size: 3, leafCount: 3, root: await rootOf(3) });
  });

  it('refuses to prove over a tree whose root differs from what the portal reported', async () => {
    const other = StrKey.encodeContract(Buffer.alloc(32, 8));
    served = [rawDeposit(0, await rootOf(1), other), rawDeposit(1, 12345n, other)];
    portalViews.set(other, { root: 12345n, leafCount: 2 });
    await store.insertLeaf({ chainId: '148', portalAddress: other }, 1, leafOf(1));
    const error = await sync(other).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TreeOutOfSyncError);
    expect((error as Error).message).toMatch(/differs from its portal \(root 12345\)/);
  });

  it('checks the root against the portal even when the mirrored tree has no gap (the portal decides, not our own tree)', async () => {
    const third = StrKey.encodeContract(Buffer.alloc(32, 9));
    const key = { chainId: '148', portalAddress: third };
    await store.insertLeaves(key, [0, 1].map((i) => ({ index: i, leaf: leafOf(i) })));
    portalViews.set(third, { root: 999n, leafCount: 2 });
    const error = await sync(third).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TreeOutOfSyncError);
    expect((error as Error).message).toMatch(/root 999/);
    portalViews.set(third, { root: await rootOf(2), leafCount: 2 });
    await sync(third);
  });
});
