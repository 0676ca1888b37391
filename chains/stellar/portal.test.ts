import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RpcUnavailableError } from '../errors.ts';
import { fund } from '../../devnet/stellar/client.ts';
import { depositOnPortal, startSorobanTestNetwork, type PortalDeposit, type SorobanTestNetwork } from '../../test/support/soroban-network.ts';
import { scanLimitedGetEvents, startSorobanRpcProxy, type SorobanRpcProxy } from '../../test/support/soroban-rpc-proxy.ts';
import { readStellarPortalDeposits, readStellarPortalRoot } from './portal.ts';
import { createStellarClient } from './verify.ts';

/**
 * Reading a Soroban OrderPortal's deposits and root from the local Soroban network (devnet/stellar:
 * the real host ran the portal's wasm): three real deposits, read back through getEvents in pages
 * (through a proxy that only records the requests; the answers are the network's).
 */

const bridger = Keypair.random();
let net: SorobanTestNetwork;
let proxy: SorobanRpcProxy;
const deposits: PortalDeposit[] = [];

beforeAll(async () => {
  net = await startSorobanTestNetwork();
  await fund(net.server, bridger.publicKey());
  for (let i = 0; i < 3; i++) deposits.push(await depositOnPortal(net, bridger));
  proxy = await startSorobanRpcProxy(net.node.rpcUrl);
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await net?.stop();
});

describe('readStellarPortalDeposits', () => {
  it('pages through getEvents and returns the deposits in leaf order, as the portal recorded them', async () => {
    const first = deposits[0]!.ledger;
    const last = deposits[2]!.ledger;
    const read = await readStellarPortalDeposits(createStellarClient(proxy.url), net.deployment.orderPortal, first, last, 2);
    expect(read).toEqual(deposits.map((d) => ({
      orderHash: d.orderHash, reqHash: d.reqHash, leafIndex: d.leafIndex, leaf: d.leaf, secretCommitment: d.secretCommitment, root: d.root,
      ledger: d.ledger, txHash: d.txHash,
    })));
    expect(read.map((d) => d.leafIndex)).toEqual([0, 1, 2]);
    const calls = proxy.requests.filter((r) => r.method === 'getEvents');
    // Soroban RPC's endLedger is exclusive; the reader's range is inclusive.
    expect(calls[0]!.params).toMatchObject({
      startLedger: first, endLedger: last + 1, filters: [{ type: 'contract', contractIds: [net.deployment.orderPortal] }], pagination: { limit: 2 },
    });
    expect(calls[1]!.params).toMatchObject({ pagination: { cursor: expect.any(String), limit: 2 } });
  });

  it('reads the deposits an RPC reaches only past its per-request scan limit, window after window', async () => {
    // The double makes each getEvents scan two ledgers (the one its cursor is in, and the next), as stellar-rpc scans at most 10,000.
    proxy.rewrites.getEvents = scanLimitedGetEvents(2);
    proxy.requests.length = 0;
    try {
      const read = await readStellarPortalDeposits(createStellarClient(proxy.url), net.deployment.orderPortal, deposits[0]!.ledger, deposits[2]!.ledger);
      expect(read.map((d) => d.txHash)).toEqual(deposits.map((d) => d.txHash));
      expect(proxy.requests.filter((r) => r.method === 'getEvents').length).toBeGreaterThan(1);
    } finally {
      delete proxy.rewrites.getEvents;
    }
  });

  it('reads nothing outside the deposits\' ledgers', async () => {
    expect(await readStellarPortalDeposits(createStellarClient(net.node.rpcUrl), net.deployment.orderPortal, 1, deposits[0]!.ledger - 1)).toEqual([]);
  });

  it('reports an unreachable RPC as unavailable', async () => {
    await expect(readStellarPortalDeposits(createStellarClient('http://127.0.0.1:1'), net.deployment.orderPortal, 1, 2)).rejects.toThrow(RpcUnavailableError);
  });
});

describe('readStellarPortalRoot', () => {
  it('is the root after the latest deposit and the number of deposits', async () => {
    expect(await readStellarPortalRoot(createStellarClient(net.node.rpcUrl), net.deployment.orderPortal)).toEqual({ root: deposits[2]!.root, leafCount: 3 });
  });
});
