import { Keypair, xdr } from '@stellar/stellar-sdk';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  NotFinalError,
  RpcUnavailableError,
  TransactionFailedError,
  TransactionNotFoundError,
  WrongContractError,
  WrongEventError,
} from '../errors.ts';
import { startSorobanRpcStub, type SorobanRpcStub } from '../../test/support/fake-soroban-rpc.ts';
import {
  getTransactionResult,
  hostEvent,
  hostEvents,
  invokeEnvelope,
  transactionMeta,
  transactionResult,
} from '../../test/support/stellar-fixtures.ts';
import { ACTION_NAMES, type ActionName } from '../request-schema.ts';
import { createTransactionVerifier } from '../verify.ts';
import { keyTopicName } from './events.ts';
import { createStellarClient, isStellarLedgerCanonical, verifyStellarTransaction } from './verify.ts';

const verifier = createTransactionVerifier();

// Real events: what contracts/soroban's OrderPortal and AdManager emitted in the Soroban host.
const deposit = hostEvent('OrderCreated', 2);
const otherDeposit = hostEvent('OrderCreated', 0);
const adManagerEvent = hostEvent('AdFunded');
const portal = deposit.contractId;
const otherContract = adManagerEvent.contractId;
const bridger = Keypair.random();
const orderHash = deposit.key;
const reqHash = deposit.reqHash;
const vectors = JSON.parse(readFileSync(new URL('../../contracts/soroban/vectors.json', import.meta.url), 'utf8'));
const ours = vectors.orderPortal.deposits[2];
/** The data fields the portal put in the event, as the chains module reads them. */
const depositArgs = { leafIndex: '2', leaf: ours.leaf, secretCommitment: ours.secretCommitment, root: ours.root };

let stub: SorobanRpcStub;
const transactions = new Map<string, Record<string, unknown>>();
/** Ledger hashes the stub's getLedgers serves (only hash and sequence are read). */
const ledgerHashes = new Map<number, string>([[990, 'aa'.repeat(32)], [1000, 'bb'.repeat(32)]]);

/** Registers a transaction calling `called` that emitted `events`, included in `ledger`; returns its hash. */
function addTransaction(options: {
  called?: string;
  events?: xdr.ContractEvent[];
  success?: boolean;
  ledger?: number;
  latestLedger?: number;
  metaVersion?: 3 | 4;
}): string {
  const { hash, envelopeXdr } = invokeEnvelope(bridger, options.called ?? portal, 'create_order');
  const success = options.success ?? true;
  transactions.set(
    hash,
    getTransactionResult({
      status: success ? 'SUCCESS' : 'FAILED',
      envelopeXdr,
      resultXdr: transactionResult(success),
      resultMetaXdr: transactionMeta(options.events ?? [], options.metaVersion ?? 3),
      ledger: options.ledger ?? 1000,
      latestLedger: options.latestLedger ?? 1000,
    }),
  );
  return hash;
}

const orderCreated = () => deposit.xdr;

const verify = (txHash: string, overrides: Partial<Parameters<typeof verifyStellarTransaction>[1]> = {}) =>
  verifyStellarTransaction(createStellarClient(stub.url), {
    txHash,
    contractId: portal,
    event: 'OrderCreated',
    args: { orderHash, reqHash },
    confirmations: 1,
    ...overrides,
  });

beforeAll(async () => {
  stub = await startSorobanRpcStub();
  stub.handlers.getTransaction = ({ hash }) =>
    transactions.get(String(hash)) ?? {
      status: 'NOT_FOUND',
      latestLedger: 1000,
      latestLedgerCloseTime: '1700000100',
      oldestLedger: 1,
      oldestLedgerCloseTime: '1690000000',
    };
  stub.handlers.getLedgers = ({ startLedger }) => {
    const sequence = Number(startLedger);
    if (sequence < 900) throw { code: -32600, message: 'startLedger must be between the oldest ledger: 900 and the latest ledger: 1001' };
    const hash = ledgerHashes.get(sequence);
    return { ledgers: hash ? [{ hash, sequence, ledgerCloseTime: '1700000000' }] : [], latestLedger: 1001, oldestLedger: 900 };
  };
});

afterAll(async () => {
  await stub?.close();
});

describe('verifyStellarTransaction', () => {
  it('accepts a successful invocation that emitted the expected event, with its data fields', async () => {
    const txHash = addTransaction({ events: [orderCreated()] });
    await expect(verify(txHash)).resolves.toEqual({
      txHash,
      ledger: 1000,
      blockHash: `0x${'bb'.repeat(32)}`,
      logIndex: 0,
      from: bridger.publicKey(),
      event: 'OrderCreated',
      args: { reqHash, orderHash, ...depositArgs },
      confirmations: 1,
    });
  });

  it('is what the transaction verifier runs for a STELLAR chain, by action', async () => {
    const txHash = addTransaction({ events: [orderCreated()], ledger: 990, latestLedger: 1000 });
    await expect(
      verifier.verify(
        { kind: 'STELLAR', chainId: '148', rpcUrl: stub.url },
        { txHash, contractAddress: portal, action: 'createOrder', args: { orderHash, reqHash } },
      ),
    ).resolves.toEqual({
      chainId: '148',
      txHash,
      logIndex: 0,
      block: '990',
      blockHash: `0x${'aa'.repeat(32)}`,
      from: bridger.publicKey(),
      event: 'OrderCreated',
      args: { reqHash, orderHash, ...depositArgs },
      confirmations: 11,
    });
  });

  it('verifies the event of every action as the Soroban contracts emit it', async () => {
    const all = hostEvents();
    expect(new Set(all.map((e) => e.action))).toEqual(new Set(ACTION_NAMES));
    for (const event of all) {
      const txHash = addTransaction({ called: event.contractId, events: [event.xdr] });
      const verified = await verifier.verify(
        { kind: 'STELLAR', chainId: '148', rpcUrl: stub.url },
        { txHash, contractAddress: event.contractId, action: event.action as ActionName, args: { reqHash: event.reqHash, [keyTopicName(event.event)]: event.key } },
      );
      expect(verified.event).toBe(event.event);
    }
  });

  it('reads events from protocol-23 (v4) transaction meta too', async () => {
    const txHash = addTransaction({ events: [orderCreated()], metaVersion: 4 });
    await expect(verify(`0x${txHash}`)).resolves.toMatchObject({ event: 'OrderCreated' });
  });

  it('rejects the receipt of another request to the same contract as the wrong event', async () => {
    const txHash = addTransaction({ events: [otherDeposit.xdr] });
    await expect(verify(txHash)).rejects.toThrow(WrongEventError);
  });

  it('rejects a transaction that invoked another contract', async () => {
    const txHash = addTransaction({ called: otherContract, events: [adManagerEvent.xdr] });
    await expect(verify(txHash)).rejects.toThrow(WrongContractError);
  });

  it('rejects a failed transaction', async () => {
    const txHash = addTransaction({ success: false });
    await expect(verify(txHash)).rejects.toThrow(TransactionFailedError);
  });

  it('reports an unknown hash as not found', async () => {
    await expect(verify('ab'.repeat(32))).rejects.toThrow(TransactionNotFoundError);
  });

  it('reports a ledger short of the required confirmations as not final (retryable)', async () => {
    const txHash = addTransaction({ events: [orderCreated()], ledger: 1000, latestLedger: 1001 });
    const error = await verify(txHash, { confirmations: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFinalError);
    expect(error).toMatchObject({ retryable: true, confirmations: 2, required: 3 });
  });

  it('reports a JSON-RPC error as RPC unavailable (retryable)', async () => {
    const saved = stub.handlers.getTransaction!;
    stub.handlers.getTransaction = () => {
      throw { code: -32603, message: 'internal error' };
    };
    try {
      await expect(verify('cd'.repeat(32))).rejects.toThrow(RpcUnavailableError);
    } finally {
      stub.handlers.getTransaction = saved;
    }
  });

  it('reports an unreachable RPC as unavailable', async () => {
    const error = await verifyStellarTransaction(createStellarClient('http://127.0.0.1:1'), {
      txHash: 'ab'.repeat(32),
      contractId: portal,
      event: 'OrderCreated',
      args: { orderHash },
      confirmations: 1,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcUnavailableError);
  });

  it('refuses to verify without reqHash or orderHash to bind the event, and refuses a depth of 0', async () => {
    const txHash = addTransaction({ events: [orderCreated()] });
    await expect(verify(txHash, { args: {} })).rejects.toThrow(/reqHash or orderHash/);
    await expect(verify(txHash, { args: { leafIndex: '7' } })).rejects.toThrow(/reqHash or orderHash/);
    await expect(verify(txHash, { confirmations: 0 })).rejects.toThrow(RangeError);
  });

  it('never lets a data field override a topic: a forged orderHash in the data does not match', async () => {
    const forged = `0x${'99'.repeat(32)}`;
    // The portal's real event with orderHash and reqHash fields slipped into its data map.
    const event = xdr.ContractEvent.fromXDR(deposit.xdr.toXDR());
    event.body().v0().data().map()!.push(
      new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol('orderHash'), val: xdr.ScVal.scvBytes(Buffer.from(forged.slice(2), 'hex')) }),
      new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol('reqHash'), val: xdr.ScVal.scvBytes(Buffer.from('88'.repeat(32), 'hex')) }),
    );
    const txHash = addTransaction({ events: [event] });
    await expect(verify(txHash, { args: { orderHash: forged } })).rejects.toThrow(WrongEventError);
    await expect(verify(txHash)).resolves.toMatchObject({ args: { orderHash, reqHash, ...depositArgs } });
  });

  it('gives the index of the matching event among the transaction\'s events', async () => {
    const txHash = addTransaction({ events: [otherDeposit.xdr, orderCreated()] });
    await expect(verify(txHash)).resolves.toMatchObject({ logIndex: 1 });
  });

  it('finds each subject\'s own event in a transaction carrying several (a batch), each with its index', async () => {
    const txHash = addTransaction({ events: [deposit.xdr, otherDeposit.xdr] });
    await expect(verify(txHash)).resolves.toMatchObject({ logIndex: 0, args: { orderHash } });
    await expect(verify(txHash, { args: { orderHash: otherDeposit.key } })).resolves.toMatchObject({ logIndex: 1, args: { orderHash: otherDeposit.key } });
    const events = await verifier.events({ kind: 'STELLAR', chainId: 'stellar-test', rpcUrl: stub.url }, { txHash, contractAddress: portal });
    expect(events.map((e) => [e.logIndex, e.args.orderHash])).toEqual([[0, orderHash], [1, otherDeposit.key]]);
  });
});

describe('isStellarLedgerCanonical', () => {
  const server = () => createStellarClient(stub.url);

  it('is true for the ledger hash the RPC serves and false for another', async () => {
    await expect(isStellarLedgerCanonical(server(), 1000, `0x${'bb'.repeat(32)}`)).resolves.toBe(true);
    await expect(isStellarLedgerCanonical(server(), 1000, `0x${'cc'.repeat(32)}`)).resolves.toBe(false);
  });

  it('reads a ledger older than the retention window as canonical (closed ledgers are final)', async () => {
    await expect(isStellarLedgerCanonical(server(), 10, `0x${'cc'.repeat(32)}`)).resolves.toBe(true);
  });
});
