import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RpcUnavailableError } from '../errors.ts';
import { startSorobanRpcStub, type SorobanRpcStub } from '../../test/support/fake-soroban-rpc.ts';
import { hostEvents } from '../../test/support/stellar-fixtures.ts';
import { readStellarPortalDeposits } from './portal.ts';
import { createStellarClient } from './verify.ts';

/** The portal's real OrderCreated events (emitted in the Soroban host) as raw getEvents entries. */
const created = hostEvents().filter((e) => e.event === 'OrderCreated');
const portal = created[0]!.contractId;
const vectors = JSON.parse(readFileSync(new URL('../../contracts/soroban/vectors.json', import.meta.url), 'utf8'));

function rawDeposit(index: number, ledger: number) {
  const body = created[index]!.xdr.body().v0();
  return {
    type: 'contract',
    ledger,
    ledgerClosedAt: '2026-11-22T00:00:00Z',
    contractId: portal,
    id: `000${ledger}-000000000${index}`,
    pagingToken: `000${ledger}-000000000${index}`,
    inSuccessfulContractCall: true,
    txHash: 'ab'.repeat(32),
    topic: body.topics().map((topic) => topic.toXDR('base64')),
    value: body.data().toXDR('base64'),
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
    const expected = (vectors.orderPortal.deposits as Array<{ leaf: string; root: string; secretCommitment: string; order: { hash: string } }>)
      .slice(0, 3)
      .map((d, i) => [i, BigInt(d.leaf), BigInt(d.root), BigInt(d.secretCommitment), d.order.hash, 100 + i]);
    expect(deposits.map((d) => [d.leafIndex, d.leaf, d.root, d.secretCommitment, d.orderHash, d.ledger])).toEqual(expected);
    expect(deposits[0]!.reqHash).toBe(created[0]!.reqHash);
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
