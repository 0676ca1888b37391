import { readFileSync } from 'node:fs';
import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidToBytes32 } from '../chains/address.ts';
import { stellarRequestHash } from '../chains/stellar/request-layout.ts';
import { ACTIONS, structFields } from '../chains/request-schema.ts';
import { importRegistry } from '../registry/import.ts';
import { startSorobanRpcStub, type SorobanRpcStub } from './support/fake-soroban-rpc.ts';
import { startTestService, type TestService } from './support/service.ts';
import {
  hostLayoutEvent, getTransactionResult, invokeEnvelope, transactionMeta, transactionResult, TEST_PASSPHRASE,
} from './support/stellar-fixtures.ts';
import { call, loginStellar } from './support/wallets.ts';

/**
 * Ads on a Stellar ad chain: ed25519-signed requests, verified against the Soroban RPC test double
 * serving real XDR (no Stellar network runs here), and balances under concurrent confirmations.
 */

const STELLAR = '148';
const maker = Keypair.random();
const evmRecipient = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

let service: TestService;
let stub: SorobanRpcStub;
let token: string;
let routeId: string;
let adManager: string;
const transactions = new Map<string, Record<string, unknown>>();
let ledger = 1000;

/** What a Soroban AdManager emits for a signed request, served by the RPC double as a mined transaction. */
function mine<E extends 'AdCreated' | 'AdFunded' | 'AdWithdrawn'>(
  signed: Record<string, string>, event: E, data: Parameters<typeof hostLayoutEvent<E>>[4],
): string {
  const seq = ++ledger;
  // A distinct function name per transaction keeps every envelope (and so its hash) unique.
  const { hash, envelopeXdr } = invokeEnvelope(maker, adManager, `${event.toLowerCase()}${seq}`);
  transactions.set(hash, getTransactionResult({
    status: 'SUCCESS',
    envelopeXdr,
    resultXdr: transactionResult(true),
    resultMetaXdr: transactionMeta([hostLayoutEvent(adManager, event, signed.reqHash!, uuidToBytes32(signed.adId!), data)], 4),
    ledger: seq,
    latestLedger: seq,
  }));
  return hash;
}

/** AdCreated's data as the contract emits it for the signed createAd. */
const adCreatedData = (signed: Record<string, string>) => ({
  creator: signed.adCreator!, token: signed.adToken!, amount: signed.initialAmount!, orderChainId: signed.orderChainId!,
  adRecipient: `0x${signed.adRecipient!.slice(2).toLowerCase().padStart(64, '0')}`,
});
const confirm = (adId: string, txHash: string) => call(service, 'POST', `/v1/ads/${adId}/confirm`, { txHash }, token);
const ad = async (id: string) => (await call(service, 'GET', `/v1/ads/${id}`, undefined, token)).body;

async function confirmedAd(fund: string): Promise<string> {
  const created = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: evmRecipient, fundAmount: fund }, token);
  expect(created.status).toBe(200);
  expect((await confirm(created.body.adId, mine(created.body, 'AdCreated', adCreatedData(created.body)))).status).toBe(200);
  return created.body.adId;
}

beforeAll(async () => {
  stub = await startSorobanRpcStub();
  stub.handlers.getTransaction = ({ hash }) => transactions.get(String(hash)) ?? {
    status: 'NOT_FOUND', latestLedger: ledger, latestLedgerCloseTime: '1700000100', oldestLedger: 1, oldestLedgerCloseTime: '1690000000',
  };
  stub.handlers.getLedgers = ({ startLedger }) => ({
    ledgers: [{ hash: Number(startLedger).toString(16).padStart(64, '0'), sequence: Number(startLedger), ledgerCloseTime: '1700000000' }],
    latestLedger: ledger, oldestLedger: 1,
  });
  service = await startTestService();
  const registry = JSON.parse(readFileSync(new URL('../devnet/registry.json', import.meta.url), 'utf8'));
  for (const chain of registry.chains) if (chain.chainId === STELLAR) chain.rpcUrl = stub.url;
  await importRegistry(service.knex, registry);
  adManager = registry.chains.find((c: any) => c.chainId === STELLAR).adManagerAddress;
  token = (await loginStellar(service, maker)).body.tokens.access;
  const routes = await call(service, 'GET', `/v1/routes?adChainId=${STELLAR}&orderChainId=31337`);
  routeId = routes.body.data[0].id;
});

afterAll(async () => {
  await service?.close();
  await stub?.close();
});

describe('an ad on a Stellar chain', () => {
  it('signs createAd with the relayer ed25519 key over the documented layout, and confirms from real XDR', async () => {
    const res = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: evmRecipient, fundAmount: '5000' }, token);
    expect(res.status).toBe(200);
    const signed = res.body;
    expect(signed).toMatchObject({ chainKind: 'STELLAR', chainId: STELLAR, contractAddress: adManager, adCreator: maker.publicKey(), adRecipient: evmRecipient });
    // The contract checks: ed25519_verify(signerPublicKey, reqHash, signature) over the layout's hash.
    const hash = stellarRequestHash(
      { name: 'ProofBridge', version: '1', networkPassphrase: TEST_PASSPHRASE, chainId: STELLAR, contract: adManager },
      ACTIONS.createAd.primaryType, structFields('createAd'),
      Object.fromEntries(structFields('createAd').map((f) => [f.name, signed[f.name]])),
    );
    expect(`0x${hash.toString('hex')}`).toBe(signed.reqHash);
    expect(Keypair.fromPublicKey(signed.signerPublicKey).verify(hash, Buffer.from(signed.signature.slice(2), 'hex'))).toBe(true);

    expect((await confirm(signed.adId, mine(signed, 'AdCreated', adCreatedData(signed)))).body).toEqual({ adId: signed.adId, success: true });
    expect(await ad(signed.adId)).toMatchObject({ status: 'ACTIVE', poolAmount: '5000', availableAmount: '5000' });
  });

  it('refuses an amount a Soroban token cannot hold, naming the field', async () => {
    const res = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: evmRecipient, fundAmount: (1n << 127n).toString() }, token);
    expect(res.status).toBe(422);
    expect(res.body.message).toEqual([expect.stringMatching(/^fundAmount does not fit chain 148/)]);
  });

  it('rejects an event carrying another request\'s hash', async () => {
    const adId = await confirmedAd('100');
    const fund = (await call(service, 'POST', `/v1/ads/${adId}/fund`, { poolAmountTopUp: '10' }, token)).body;
    const forged = mine({ ...fund, reqHash: `0x${'11'.repeat(32)}` }, 'AdFunded', { amount: 10n, available: 110n });
    const res = await confirm(adId, forged);
    expect(res.status).toBe(422);
    expect((await ad(adId)).poolAmount).toBe('100');
  });
});

describe('balances under concurrent confirmations', () => {
  it('hold their sums and never go negative when funds, withdrawals and their confirms race', async () => {
    const adId = await confirmedAd('1000');
    // Eight funds of 10 and eight withdrawal requests of 100 fired at once: withdrawals hold their
    // amount as they are granted, so together they can never ask more than was available.
    const funds = await Promise.all(Array.from({ length: 8 }, () => call(service, 'POST', `/v1/ads/${adId}/fund`, { poolAmountTopUp: '10' }, token)));
    const withdrawals = await Promise.all(Array.from({ length: 12 }, () =>
      call(service, 'POST', `/v1/ads/${adId}/withdraw`, { poolAmountWithdraw: '100', to: maker.publicKey() }, token)));
    const granted = withdrawals.filter((w) => w.status === 200);
    expect(granted.length).toBe(10);
    expect(withdrawals.filter((w) => w.status === 409).length).toBe(2);
    expect(await ad(adId)).toMatchObject({ poolAmount: '1000', availableAmount: '0', status: 'EXHAUSTED' });

    const txs = [
      ...funds.map((f, i) => mine(f.body, 'AdFunded', { amount: 10n, available: BigInt(1000 + 10 * (i + 1)) })),
      ...granted.map((w) => mine(w.body, 'AdWithdrawn', { amount: 100n, to: maker.publicKey() })),
    ];
    // Every confirmation twice, all at once.
    const answers = await Promise.all([...txs, ...txs].map((tx) => confirm(adId, tx)));
    expect(answers.filter((a) => a.status !== 200).map((a) => a.body)).toEqual([]);
    const row = await service.knex('ads').where({ id: adId }).first();
    expect(row).toMatchObject({ pool_amount: '1080', paid_out_amount: '1000', withdrawing_amount: '0', available_amount: '80' });
    expect(Number((await service.knex('chain_events').whereIn('tx_hash', txs).count({ n: '*' }))[0]!.n)).toBe(txs.length);
  });
});
