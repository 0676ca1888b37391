import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BRIDGE_INTERFACE } from '../chains/evm/abi.ts';
import { createChains } from '../chains/chains.ts';
import { MerkleTreeStore } from '../prover/merkle/store.ts';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { TreeOutOfSyncError } from './lifecycle/errors.ts';
import { syncOrderTree } from './tree-sync.ts';

/**
 * Filling an EVM portal's mirrored tree from its OrderCreated logs (real PostgreSQL store, real
 * Poseidon tree). The chain is a DOUBLE: a JSON-RPC server that answers eth_blockNumber, the
 * portal's currentRoot/nextLeafIndex eth_calls and eth_getLogs from a list of deposits, and records
 * each eth_getLogs range, so a test can see which blocks the sync read.
 */

const PORTAL = '0x00000000000000000000000000000000000000aa';
const ORDER_CREATED = BRIDGE_INTERFACE.getEvent('OrderCreated')!;
const hex = (n: bigint | number) => `0x${BigInt(n).toString(16)}`;
const word = (n: bigint | number) => `0x${BigInt(n).toString(16).padStart(64, '0')}`;

interface ChainDeposit { leafIndex: number; leaf: bigint; root: bigint; block: number }

let db: TestDatabase;
let store: MerkleTreeStore;
let server: http.Server;
let rpcUrl: string;
const chain = { head: 1, deposits: [] as ChainDeposit[], getLogs: [] as Array<{ from: number; to: number }>, alterLeaf: undefined as number | undefined };
const chains = createChains();

/** The portal's root after each leaf, computed with the same tree under a scratch key. */
async function deposit(leaf: bigint) {
  const leafIndex = chain.deposits.length;
  const state = await store.insertLeaves({ chainId: 'scratch', portalAddress: PORTAL }, [{ index: leafIndex, leaf }]);
  chain.head += 1;
  chain.deposits.push({ leafIndex, leaf, root: state.root, block: chain.head });
}

function answer(method: string, params: any[]): unknown {
  const at = (tag: string) => (tag === 'latest' ? chain.head : Number(BigInt(tag)));
  const upTo = (block: number) => chain.deposits.filter((d) => d.block <= block);
  if (method === 'eth_chainId') return hex(31337);
  if (method === 'eth_blockNumber') return hex(chain.head);
  if (method === 'eth_call') {
    const [{ data }, tag] = params;
    const known = upTo(at(tag));
    if (data === BRIDGE_INTERFACE.encodeFunctionData('currentRoot')) return word(known.at(-1)?.root ?? 0n);
    if (data === BRIDGE_INTERFACE.encodeFunctionData('nextLeafIndex')) return word(known.length);
    throw new Error(`unknown call ${data}`);
  }
  if (method === 'eth_getLogs') {
    const from = Number(BigInt(params[0].fromBlock));
    const to = Number(BigInt(params[0].toBlock));
    chain.getLogs.push({ from, to });
    return chain.deposits.filter((d) => d.block >= from && d.block <= to).map((d) => {
      const leaf = d.leafIndex === chain.alterLeaf ? d.leaf + 1n : d.leaf;
      const log = BRIDGE_INTERFACE.encodeEventLog(ORDER_CREATED, [word(d.leafIndex + 1), word(d.leafIndex + 2), d.leafIndex, leaf, 7n, d.root]);
      return {
        address: PORTAL, topics: log.topics, data: log.data, blockNumber: hex(d.block), blockHash: word(d.block), transactionHash: word(1000 + d.leafIndex),
        transactionIndex: '0x0', logIndex: '0x0', removed: false,
      };
    });
  }
  throw new Error(`unexpected ${method}`);
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = new MerkleTreeStore(db.knex);
  server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const one = (call: { id: number; method: string; params: any[] }) => {
      try {
        return { jsonrpc: '2.0', id: call.id, result: answer(call.method, call.params ?? []) };
      } catch (error) {
        return { jsonrpc: '2.0', id: call.id, error: { code: -32000, message: (error as Error).message } };
      }
    };
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(Array.isArray(body) ? body.map(one) : one(body)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  rpcUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => { server?.closeAllConnections(); server?.close(() => resolve()); });
  await db?.drop();
});

const key = { chainId: '31337', portalAddress: PORTAL };
const sync = () => syncOrderTree({ store, key, chain: { kind: 'EVM', chainId: '31337', rpcUrl }, chains });

describe('syncOrderTree on an EVM portal', () => {
  it('reads the portal\'s log once from block 0, then only the blocks after the last sync it found level', async () => {
    for (const leaf of [11n, 12n, 13n]) await deposit(leaf);
    await store.insertLeaf(key, 2, 13n); // only our own deposit
    await sync();
    expect(await store.getState(key)).toMatchObject({ size: 3, leafCount: 3, root: chain.deposits[2]!.root });
    expect(chain.getLogs).toEqual([{ from: 0, to: 4 }]);

    // Two more deposits by others, then ours: only the new blocks are read.
    for (const leaf of [14n, 15n, 16n]) await deposit(leaf);
    await store.insertLeaf(key, 5, 16n);
    await sync();
    expect(await store.getState(key)).toMatchObject({ size: 6, leafCount: 6, root: chain.deposits[5]!.root });
    expect(chain.getLogs).toEqual([{ from: 0, to: 4 }, { from: 5, to: 7 }]);
  });

  it('still refuses a tree that does not add up to the portal\'s root, after reading the whole log again', async () => {
    chain.getLogs = [];
    chain.alterLeaf = 7; // the RPC serves a leaf that is not the one the portal hashed
    try {
      for (const leaf of [17n, 18n, 19n]) await deposit(leaf);
      await store.insertLeaf(key, 8, 19n);
      const error = await sync().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TreeOutOfSyncError);
      expect(chain.getLogs).toEqual([{ from: 8, to: 10 }, { from: 0, to: 10 }]);
    } finally {
      chain.alterLeaf = undefined;
    }
  });
});
