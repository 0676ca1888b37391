import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fund } from '../../devnet/stellar/client.ts';
import { depositOnPortal, startSorobanTestNetwork, type PortalDeposit, type SorobanTestNetwork } from '../../test/support/soroban-network.ts';
import { scanLimitedGetEvents, startSorobanRpcProxy, type SorobanRpcProxy } from '../../test/support/soroban-rpc-proxy.ts';
import { RpcUnavailableError } from '../errors.ts';
import { createChainStateReader } from '../state.ts';
import { cursorLedger } from './event-scan.ts';
import { findStellarEventTransaction } from './state.ts';
import { createStellarClient } from './verify.ts';

/**
 * Searching a Soroban contract's events for a request's transaction on the local Soroban network (a
 * real deposit into the OrderPortal), through a proxy that makes the RPC scan at most 5 ledgers per
 * request as stellar-rpc scans at most 10,000 (a double named as such): an empty page is not the end
 * of the range.
 */

const bridger = Keypair.random();
let net: SorobanTestNetwork;
let proxy: SorobanRpcProxy;
let deposit: PortalDeposit;

beforeAll(async () => {
  net = await startSorobanTestNetwork();
  await fund(net.server, bridger.publicKey());
  deposit = await depositOnPortal(net, bridger);
  // Some ledgers after the deposit, so the range has windows on both sides of it.
  for (let i = 0; i < 6; i++) await net.node.closeLedger();
  proxy = await startSorobanRpcProxy(net.node.rpcUrl);
}, 120_000);

beforeEach(() => {
  proxy.requests.length = 0;
  proxy.rewrites.getEvents = scanLimitedGetEvents(5);
});

afterAll(async () => {
  await proxy?.close();
  await net?.stop();
});

const search = (reqHash: string) =>
  findStellarEventTransaction(createStellarClient(proxy.url), net.deployment.orderPortal, 'OrderCreated', { reqHash }, new Date());
const windows = () => proxy.requests.filter((r) => r.method === 'getEvents');

describe('findStellarEventTransaction', () => {
  it('finds a transaction several empty scan windows into the range, following the cursor', async () => {
    expect(await search(deposit.reqHash)).toBe(deposit.txHash);
    const calls = windows();
    expect(calls.length).toBeGreaterThan(2);
    const start = calls[0]!.params.startLedger as number;
    expect(deposit.ledger - start).toBeGreaterThanOrEqual(10);
    // Each window starts where the previous answer's cursor points: 5 ledgers on, never skipping one.
    const starts = calls.slice(1).map((c) => cursorLedger((c.params.pagination as { cursor: string }).cursor)!);
    expect(starts).toEqual(starts.map((_, i) => start + 4 * (i + 1)));
  });

  it('answers "not there" only once every window up to the latest ledger was searched', async () => {
    const latest = (await net.server.getLatestLedger()).sequence;
    expect(await search(`0x${'5a'.repeat(32)}`)).toBeNull();
    const calls = windows();
    const lastStart = cursorLedger((calls.at(-1)!.params.pagination as { cursor: string }).cursor)!;
    expect(lastStart + 5).toBeGreaterThan(latest);
  });

  it('cannot tell when the RPC no longer keeps the range\'s first ledger', async () => {
    // The double answers as stellar-rpc does for a startLedger outside its retention window.
    proxy.rewrites.getEvents = () => { throw { code: -32600, message: 'startLedger must be within the ledger range: 9000 - 12000' }; };
    expect(await search(deposit.reqHash)).toBeUndefined();
  });

  it('does not take an answer without a cursor it can follow for "not there"', async () => {
    proxy.rewrites.getEvents = (result) => ({ ...result, events: [], cursor: '' });
    await expect(search(deposit.reqHash)).rejects.toThrow(RpcUnavailableError);
  });
});

describe('cursorLedger', () => {
  it('reads the ledger of a Soroban RPC event id or cursor, and nothing else', () => {
    expect(cursorLedger('0000000429496729600-0000000000')).toBe(100);
    expect(cursorLedger(`${((123_456n << 32n) | (7n << 12n) | 2n).toString().padStart(19, '0')}-0000000003`)).toBe(123_456);
    expect(cursorLedger('end')).toBeUndefined();
  });
});

describe('the chain\'s time (ChainStateReader.finalTime)', () => {
  it('is the latest ledger\'s close time, what the Soroban contracts compare a lock deadline with, and follows the ledger when it moves', async () => {
    const reader = createChainStateReader();
    const chain = { kind: 'STELLAR' as const, chainId: '0', rpcUrl: net.node.rpcUrl };
    const closed = await net.node.closeLedger();
    expect(await reader.finalTime(chain)).toBe(BigInt(closed.closeTime));
    const later = await net.node.increaseTime(3_600);
    expect(later.closeTime).toBeGreaterThan(closed.closeTime);
    expect(await reader.finalTime(chain)).toBe(BigInt(later.closeTime));
  });

  it('cannot tell (undefined, never a guess) when the RPC does not answer', async () => {
    proxy.rewrites.getLatestLedger = () => { throw { code: -32603, message: 'the node is down' }; };
    try {
      expect(await createChainStateReader().finalTime({ kind: 'STELLAR', chainId: '0', rpcUrl: proxy.url })).toBeUndefined();
    } finally {
      delete proxy.rewrites.getLatestLedger;
    }
  });
});
