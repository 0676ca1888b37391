import { Keypair, xdr } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  NotFinalError,
  RpcUnavailableError,
  TransactionFailedError,
  TransactionNotFoundError,
  WrongContractError,
  WrongEventError,
} from '../errors.ts';
import { fund } from '../../devnet/stellar/client.ts';
import { startSorobanRpcProxy, type SorobanRpcProxy } from '../../test/support/soroban-rpc-proxy.ts';
import {
  createAdOnManager, depositOnPortal, failedDeposit, startSorobanTestNetwork, type PortalDeposit, type SorobanTestNetwork,
} from '../../test/support/soroban-network.ts';
import { createTransactionVerifier } from '../verify.ts';
import { createStellarClient, isStellarLedgerCanonical, verifyStellarTransaction } from './verify.ts';

/**
 * Verifying reported Stellar transactions against the local Soroban network (devnet/stellar: the
 * real host ran the OrderPortal's and AdManager's wasm and wrote the transactions' XDR). What the
 * real network never answers (an RPC's internal error, an altered or older-protocol answer, a
 * retention window already passed) comes from a rewriting proxy in front of it, named as such.
 * Every action's event through the service's own confirm: test/ads/ads-stellar.test.ts and
 * test/trades/trades-stellar.test.ts.
 */

const verifier = createTransactionVerifier();
const bridger = Keypair.random();
const maker = Keypair.random();

let net: SorobanTestNetwork;
let proxy: SorobanRpcProxy;
let deposit: PortalDeposit;
let otherDeposit: PortalDeposit;
let portal: string;

/** The data fields the portal put in the OrderCreated event, as the chains module reads them. */
const depositArgs = (d: PortalDeposit) => ({
  reqHash: d.reqHash, orderHash: d.orderHash, leafIndex: String(d.leafIndex), leaf: d.leaf.toString(),
  secretCommitment: d.secretCommitment.toString(), root: d.root.toString(),
});

const verify = (txHash: string, overrides: Partial<Parameters<typeof verifyStellarTransaction>[1]> = {}, url = net.node.rpcUrl) =>
  verifyStellarTransaction(createStellarClient(url), {
    txHash,
    contractId: portal,
    event: 'OrderCreated',
    args: { orderHash: deposit.orderHash, reqHash: deposit.reqHash },
    confirmations: 1,
    ...overrides,
  });

/** The including ledger's hash, as the network's getLedgers serves it. */
async function ledgerHash(sequence: number): Promise<string> {
  const { ledgers } = await createStellarClient(net.node.rpcUrl).getLedgers({ startLedger: sequence, pagination: { limit: 1 } });
  return `0x${ledgers[0]!.hash}`;
}

beforeAll(async () => {
  net = await startSorobanTestNetwork();
  portal = net.deployment.orderPortal;
  await Promise.all([fund(net.server, bridger.publicKey()), fund(net.server, maker.publicKey())]);
  deposit = await depositOnPortal(net, bridger);
  otherDeposit = await depositOnPortal(net, bridger);
  proxy = await startSorobanRpcProxy(net.node.rpcUrl);
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await net?.stop();
});

describe('verifyStellarTransaction', () => {
  it('accepts a successful deposit that emitted the expected event, with its data fields and the ledger\'s hash', async () => {
    const verified = await verify(deposit.txHash);
    expect(verified).toEqual({
      txHash: deposit.txHash,
      ledger: deposit.ledger,
      blockHash: await ledgerHash(deposit.ledger),
      // The XLM contract's transfer event comes first: the portal pulls the deposit before it emits.
      logIndex: 1,
      from: bridger.publicKey(),
      event: 'OrderCreated',
      args: depositArgs(deposit),
      confirmations: expect.any(Number),
    });
    expect(verified.confirmations).toBeGreaterThanOrEqual(1);
  });

  it('is what the transaction verifier runs for a STELLAR chain, by action', async () => {
    await expect(verifier.verify(
      { kind: 'STELLAR', chainId: '148', rpcUrl: net.node.rpcUrl },
      { txHash: deposit.txHash, contractAddress: portal, action: 'createOrder', args: { orderHash: deposit.orderHash, reqHash: deposit.reqHash } },
    )).resolves.toMatchObject({
      chainId: '148', txHash: deposit.txHash, logIndex: 1, block: String(deposit.ledger), blockHash: await ledgerHash(deposit.ledger),
      from: bridger.publicKey(), event: 'OrderCreated', args: depositArgs(deposit),
    });
  });

  it('accepts a 0x-prefixed hash', async () => {
    await expect(verify(`0x${deposit.txHash}`)).resolves.toMatchObject({ event: 'OrderCreated', args: { orderHash: deposit.orderHash } });
  });

  it('rejects the transaction of another request to the same contract as the wrong event', async () => {
    await expect(verify(otherDeposit.txHash)).rejects.toThrow(WrongEventError);
  });

  it('rejects a transaction that invoked another contract (an ad on the AdManager)', async () => {
    const ad = await createAdOnManager(net, maker);
    await expect(verify(ad.txHash, { args: { reqHash: ad.reqHash } })).rejects.toThrow(WrongContractError);
  });

  it('rejects a transaction that failed in its ledger', async () => {
    const failed = await failedDeposit(net, bridger);
    await expect(verify(failed)).rejects.toThrow(TransactionFailedError);
  });

  it('reports an unknown hash as not found', async () => {
    await expect(verify('ab'.repeat(32))).rejects.toThrow(TransactionNotFoundError);
  });

  it('reports a ledger short of the required confirmations as not final (retryable)', async () => {
    const error = await verify(deposit.txHash, { confirmations: 1_000_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFinalError);
    expect(error).toMatchObject({ retryable: true, required: 1_000_000 });
  });

  it('refuses to verify without reqHash or orderHash to bind the event, and refuses a depth of 0', async () => {
    await expect(verify(deposit.txHash, { args: {} })).rejects.toThrow(/reqHash or orderHash/);
    await expect(verify(deposit.txHash, { args: { leafIndex: '7' } })).rejects.toThrow(/reqHash or orderHash/);
    await expect(verify(deposit.txHash, { confirmations: 0 })).rejects.toThrow(RangeError);
  });

  it('reports an unreachable RPC as unavailable', async () => {
    await expect(verify(deposit.txHash, {}, 'http://127.0.0.1:1')).rejects.toThrow(RpcUnavailableError);
  });
});

describe('verifyStellarTransaction against a broken or hostile RPC (a rewriting proxy: DOUBLE)', () => {
  /** The real getTransaction answer with the operation's events replaced by `edit(events)`, in its meta and its event list alike. */
  const withEvents = (edit: (events: xdr.ContractEvent[]) => xdr.ContractEvent[]) => (result: any) => {
    const meta = xdr.TransactionMeta.fromXDR(result.resultMetaXdr, 'base64');
    const operation = meta.v4().operations()[0]!;
    operation.events(edit(operation.events()));
    const events = { ...result.events, contractEventsXdr: [operation.events().map((event) => event.toXDR('base64'))] };
    return { ...result, resultMetaXdr: meta.toXDR('base64'), events };
  };
  const realEvents = async (txHash: string) =>
    xdr.TransactionMeta.fromXDR((await net.server._getTransaction(txHash)).resultMetaXdr!, 'base64').v4().operations()[0]!.events();

  it('reports a JSON-RPC error as RPC unavailable (retryable)', async () => {
    proxy.rewrites.getTransaction = () => {
      throw { code: -32603, message: 'internal error' };
    };
    try {
      await expect(verify(deposit.txHash, {}, proxy.url)).rejects.toThrow(RpcUnavailableError);
    } finally {
      delete proxy.rewrites.getTransaction;
    }
  });

  it('reads events from protocol-22 (v3) transaction meta too, as an older RPC serves it', async () => {
    proxy.rewrites.getTransaction = (result) => {
      const v4 = xdr.TransactionMeta.fromXDR(result.resultMetaXdr, 'base64').v4();
      const v3 = new xdr.TransactionMeta(3, new xdr.TransactionMetaV3({
        ext: new xdr.ExtensionPoint(0), txChangesBefore: v4.txChangesBefore(), operations: [new xdr.OperationMeta({ changes: v4.operations()[0]!.changes() })],
        txChangesAfter: v4.txChangesAfter(),
        sorobanMeta: new xdr.SorobanTransactionMeta({
          ext: new xdr.SorobanTransactionMetaExt(0), events: v4.operations()[0]!.events(), returnValue: xdr.ScVal.scvVoid(), diagnosticEvents: [],
        }),
      }));
      // An older RPC gives no separate event list: the events are read from the meta alone.
      const { events: _listed, ...older } = result;
      return { ...older, resultMetaXdr: v3.toXDR('base64') };
    };
    try {
      await expect(verify(deposit.txHash, {}, proxy.url)).resolves.toMatchObject({ event: 'OrderCreated', logIndex: 1, args: depositArgs(deposit) });
    } finally {
      delete proxy.rewrites.getTransaction;
    }
  });

  it('never lets a data field override a topic: a forged orderHash slipped into the event\'s data does not match', async () => {
    const forged = `0x${'99'.repeat(32)}`;
    proxy.rewrites.getTransaction = withEvents((events) => events.map((event) => {
      const copy = xdr.ContractEvent.fromXDR(event.toXDR());
      if (copy.body().v0().data().switch() !== xdr.ScValType.scvMap()) return copy;
      copy.body().v0().data().map()!.push(
        new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol('orderHash'), val: xdr.ScVal.scvBytes(Buffer.from(forged.slice(2), 'hex')) }),
        new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol('reqHash'), val: xdr.ScVal.scvBytes(Buffer.from('88'.repeat(32), 'hex')) }),
      );
      return copy;
    }));
    try {
      await expect(verify(deposit.txHash, { args: { orderHash: forged } }, proxy.url)).rejects.toThrow(WrongEventError);
      await expect(verify(deposit.txHash, {}, proxy.url)).resolves.toMatchObject({ args: depositArgs(deposit) });
    } finally {
      delete proxy.rewrites.getTransaction;
    }
  });

  it('finds each subject\'s own event in a transaction carrying several (a batch the real contracts never make), each with its index', async () => {
    const others = await realEvents(otherDeposit.txHash);
    proxy.rewrites.getTransaction = withEvents((events) => [...events, ...others]);
    try {
      await expect(verify(deposit.txHash, {}, proxy.url)).resolves.toMatchObject({ logIndex: 1, args: { orderHash: deposit.orderHash } });
      await expect(verify(deposit.txHash, { args: { orderHash: otherDeposit.orderHash } }, proxy.url))
        .resolves.toMatchObject({ logIndex: 3, args: depositArgs(otherDeposit) });
      const events = await verifier.events({ kind: 'STELLAR', chainId: 'stellar-test', rpcUrl: proxy.url }, { txHash: deposit.txHash, contractAddress: portal });
      expect(events.map((e) => [e.logIndex, e.args.orderHash])).toEqual([[1, deposit.orderHash], [3, otherDeposit.orderHash]]);
    } finally {
      delete proxy.rewrites.getTransaction;
    }
  });
});

describe('isStellarLedgerCanonical', () => {
  it('is true for the ledger hash the network serves and false for another', async () => {
    const server = createStellarClient(net.node.rpcUrl);
    await expect(isStellarLedgerCanonical(server, deposit.ledger, await ledgerHash(deposit.ledger))).resolves.toBe(true);
    await expect(isStellarLedgerCanonical(server, deposit.ledger, `0x${'cc'.repeat(32)}`)).resolves.toBe(false);
  });

  it('reads a ledger older than the retention window as canonical (closed ledgers are final; the proxy answers as an RPC whose window has passed it)', async () => {
    proxy.rewrites.getLedgers = () => {
      throw { code: -32600, message: `startLedger must be between the oldest ledger: ${deposit.ledger + 1} and the latest ledger: ${deposit.ledger + 500}` };
    };
    try {
      await expect(isStellarLedgerCanonical(createStellarClient(proxy.url), deposit.ledger, `0x${'cc'.repeat(32)}`)).resolves.toBe(true);
    } finally {
      delete proxy.rewrites.getLedgers;
    }
  });
});
