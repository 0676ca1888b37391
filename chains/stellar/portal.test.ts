import { StrKey, nativeToScVal, xdr } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RpcUnavailableError } from '../errors.ts';
import { startSorobanRpcStub, type SorobanRpcStub } from '../../test/support/fake-soroban-rpc.ts';
import { readStellarPortalDeposits } from './portal.ts';
import { createStellarClient } from './verify.ts';

const portal = StrKey.encodeContract(Buffer.alloc(32, 9));
const hex = (byte: number) => `0x${byte.toString(16).padStart(2, '0').repeat(32)}`;

/** A raw getEvents entry for an OrderCreated of leaf `index`, encoded from real ScVal XDR. */
function rawDeposit(index: number, ledger: number) {
  const bytes = (h: string) => xdr.ScVal.scvBytes(Buffer.from(h.slice(2), 'hex')).toXDR('base64');
  const value = xdr.ScVal.scvMap(
    [
      ['leaf', nativeToScVal(1000n + BigInt(index), { type: 'u256' })],
      ['leafIndex', nativeToScVal(index, { type: 'u32' })],
      ['root', nativeToScVal(5000n + BigInt(index), { type: 'u256' })],
      ['secretCommitment', nativeToScVal(7n, { type: 'u256' })],
    ].map(([key, val]) => new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol(key as string), val: val as xdr.ScVal })),
  );
  return {
    type: 'contract',
    ledger,
    ledgerClosedAt: '2026-11-22T00:00:00Z',
    contractId: portal,
    id: `000${ledger}-000000000${index}`,
    pagingToken: `000${ledger}-000000000${index}`,
    inSuccessfulContractCall: true,
    txHash: 'ab'.repeat(32),
    topic: [xdr.ScVal.scvSymbol('OrderCreated').toXDR('base64'), bytes(hex(0x10 + index)), bytes(hex(0x20 + index))],
    value: value.toXDR('base64'),
  };
}

let stub: SorobanRpcStub;
const requests: Record<string, unknown>[] = [];

beforeAll(async () => {
  stub = await startSorobanRpcStub();
  // Three deposits, served out of leaf order, two per page.
  const all = [rawDeposit(1, 101), rawDeposit(0, 100), rawDeposit(2, 102)];
  stub.handlers.getEvents = (params) => {
    requests.push(params);
    const pagination = params.pagination as { cursor?: string; limit: number };
    const start = pagination.cursor ? Number(pagination.cursor) : 0;
    const events = all.slice(start, start + pagination.limit);
    return { events, cursor: String(start + events.length), latestLedger: 200, oldestLedger: 1, latestLedgerCloseTime: '0', oldestLedgerCloseTime: '0' };
  };
});

afterAll(async () => {
  await stub?.close();
});

describe('readStellarPortalDeposits', () => {
  it('pages through getEvents and returns the deposits in leaf order', async () => {
    const deposits = await readStellarPortalDeposits(createStellarClient(stub.url), portal, 100, 150, 2);
    expect(deposits.map((d) => [d.leafIndex, d.leaf, d.root, d.orderHash, d.ledger])).toEqual([
      [0, 1000n, 5000n, hex(0x20), 100],
      [1, 1001n, 5001n, hex(0x21), 101],
      [2, 1002n, 5002n, hex(0x22), 102],
    ]);
    expect(deposits[0]!.reqHash).toBe(hex(0x10));
    expect(requests[0]).toMatchObject({
      startLedger: 100,
      endLedger: 151,
      filters: [{ type: 'contract', contractIds: [portal] }],
    });
    expect(requests[1]).toMatchObject({ pagination: { cursor: '2', limit: 2 } });
  });

  it('reports an unreachable RPC as unavailable', async () => {
    await expect(readStellarPortalDeposits(createStellarClient('http://127.0.0.1:1'), portal, 1, 2)).rejects.toThrow(RpcUnavailableError);
  });
});
