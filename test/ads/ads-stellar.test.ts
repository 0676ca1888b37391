import { readFileSync } from 'node:fs';
import { Address, Keypair, nativeToScVal, Operation, rpc, type xdr } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidToBytes32 } from '../../chains/address.ts';
import { stellarRequestHash } from '../../chains/stellar/request-layout.ts';
import { ACTIONS, structFields } from '../../chains/request-schema.ts';
import { STELLAR_DEVNET_CHAIN_ID, withStellarDevnet, type RegistryFile } from '../../devnet/registry-file.ts';
import { fund, readContract, submitOperation } from '../../devnet/stellar/client.ts';
import { stellarContractCall } from '../../chains/stellar/call-args.ts';
import { deployStellarContracts, type StellarDeployment } from '../../devnet/stellar/deploy.ts';
import { startStellarNode, type StellarNode } from '../../devnet/stellar/node.ts';
import { importRegistry } from '../../registry/import.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { call, loginEvm, loginStellar, newEvmAccount } from '../support/wallets.ts';

/**
 * Ads on a Stellar ad chain, end to end on the local Soroban network (devnet/stellar, the real
 * host running the AdManager's wasm): the service signs each request with its ed25519 key, the
 * Maker submits it to the contract with @stellar/stellar-sdk as a dApp would, the service
 * confirms from the network's getTransaction, and balances are read back from the chain.
 */

const STELLAR = STELLAR_DEVNET_CHAIN_ID;
const relayer = Keypair.random();
const maker = Keypair.random();
const evmRecipient = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

let node: StellarNode;
let server: rpc.Server;
let deployment: StellarDeployment;
let service: TestService;
let token: string;
let routeId: string;

const i128 = (value: string) => nativeToScVal(BigInt(value), { type: 'i128' });
const adIdArg = (adId: string) => nativeToScVal(Buffer.from(uuidToBytes32(adId).slice(2), 'hex'), { type: 'bytes' });

/** The Maker submits the signed request to the AdManager (chains/stellar/call-args.ts builds the call); resolves with the transaction hash. */
async function submit(action: 'createAd' | 'fundAd' | 'withdrawFromAd' | 'closeAd', signed: Record<string, string>): Promise<string> {
  return (await submitOperation(server, node.networkPassphrase, maker, stellarContractCall(action, signed as any))).hash;
}

/** A read-only contract call, simulated (what any explorer or wallet does for a view). */
const view = (contract: string, fn: string, args: xdr.ScVal[]) => readContract(server, node.networkPassphrase, maker.publicKey(), contract, fn, args);

const xlmBalance = async (holder: string): Promise<bigint> => view(deployment.xlm, 'balance', [new Address(holder).toScVal()]);
/** The AdManager's record of an ad, read from the chain through its `ad` view. */
const onChainAd = async (adId: string): Promise<{ available: bigint; locked: bigint; closed: boolean }> => view(deployment.adManager, 'ad', [adIdArg(adId)]);

const confirm = (adId: string, txHash: string) => call(service, 'POST', `/v1/ads/${adId}/confirm`, { txHash }, token);
const ad = async (id: string) => (await call(service, 'GET', `/v1/ads/${id}`, undefined, token)).body;

beforeAll(async () => {
  node = await startStellarNode({ ledgerMs: 250 });
  server = new rpc.Server(node.rpcUrl, { allowHttp: true });
  deployment = await deployStellarContracts({
    server, networkPassphrase: node.networkPassphrase, relayer: relayer.publicKey(), chainId: BigInt(STELLAR), domain: { name: 'ProofBridge', version: '1' },
  });
  await fund(server, maker.publicKey());
  service = await startTestService({ RELAYER_STELLAR_SECRET: relayer.secret() });
  const demo = JSON.parse(readFileSync(new URL('../../devnet/registry.json', import.meta.url), 'utf8')) as RegistryFile;
  const evmOnly: RegistryFile = {
    chains: demo.chains.filter((c) => c.chainId !== STELLAR),
    tokens: demo.tokens.filter((t) => t.chainId !== STELLAR),
    routes: demo.routes.filter((r) => r.adToken.chainId !== STELLAR && r.orderToken.chainId !== STELLAR),
  };
  await importRegistry(service.knex, withStellarDevnet(evmOnly, { rpcUrl: node.rpcUrl, networkPassphrase: node.networkPassphrase, deployment }));
  token = (await loginStellar(service, maker)).body.tokens.access;
  const routes = await call(service, 'GET', `/v1/routes?adChainId=${STELLAR}&orderChainId=31337`);
  routeId = routes.body.data.find((r: { adToken: { address: string } }) => r.adToken.address === deployment.xlm).id;
}, 10 * 60_000);

afterAll(async () => {
  await service?.close();
  await node?.stop();
});

describe('an ad on the local Stellar network', () => {
  let adId: string;

  it('is created with XLM: the AdManager checks the relayer\'s ed25519 signature over the documented layout, and the service confirms from the chain', async () => {
    const before = await xlmBalance(maker.publicKey());
    const res = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: evmRecipient, fundAmount: '50000000' }, token);
    expect(res.status).toBe(200);
    const signed = res.body;
    expect(signed).toMatchObject({ chainKind: 'STELLAR', chainId: STELLAR, contractAddress: deployment.adManager, adCreator: maker.publicKey() });
    const hash = stellarRequestHash(
      { name: 'ProofBridge', version: '1', networkPassphrase: node.networkPassphrase, chainId: STELLAR, contract: deployment.adManager },
      ACTIONS.createAd.primaryType, structFields('createAd'),
      Object.fromEntries(structFields('createAd').map((f) => [f.name, signed[f.name]])),
    );
    expect(`0x${hash.toString('hex')}`).toBe(signed.reqHash);
    adId = signed.adId;
    const txHash = await submit('createAd', signed);
    expect((await confirm(adId, txHash)).body).toEqual({ adId, success: true });
    expect(await ad(adId)).toMatchObject({ status: 'ACTIVE', poolAmount: '50000000', availableAmount: '50000000' });
    expect(await onChainAd(adId)).toMatchObject({ available: 50_000_000n, locked: 0n, closed: false });
    expect(await xlmBalance(deployment.adManager)).toBe(50_000_000n);
    // The Maker paid the pool and a fee.
    expect(before - (await xlmBalance(maker.publicKey()))).toBeGreaterThan(50_000_000n);
  });

  it('is funded and withdrawn from, each confirmed from its transaction, balances equal on both sides', async () => {
    const topUp = (await call(service, 'POST', `/v1/ads/${adId}/fund`, { poolAmountTopUp: '10000000' }, token)).body;
    expect((await confirm(adId, await submit('fundAd', topUp))).status).toBe(200);
    const withdrawal = (await call(service, 'POST', `/v1/ads/${adId}/withdraw`, { poolAmountWithdraw: '20000000', to: maker.publicKey() }, token)).body;
    expect((await confirm(adId, await submit('withdrawFromAd', withdrawal))).status).toBe(200);
    expect(await ad(adId)).toMatchObject({ poolAmount: '60000000', availableAmount: '40000000' });
    expect(await onChainAd(adId)).toMatchObject({ available: 40_000_000n });
    expect(await xlmBalance(deployment.adManager)).toBe(40_000_000n);
  });

  it('refuses a transaction that answers none of its requests (a plain XLM transfer) as the confirmation, changing nothing', async () => {
    const transfer = await submitOperation(server, node.networkPassphrase, maker, Operation.invokeContractFunction({
      contract: deployment.xlm, function: 'transfer',
      args: [new Address(maker.publicKey()).toScVal(), new Address(deployment.deployer).toScVal(), i128('1')],
    }));
    const res = await confirm(adId, transfer.hash);
    expect(res.status).toBe(422);
    expect(await ad(adId)).toMatchObject({ poolAmount: '60000000', availableAmount: '40000000' });
  });

  it('refuses a request whose signature the contract does not accept (a tampered amount)', async () => {
    const topUp = (await call(service, 'POST', `/v1/ads/${adId}/fund`, { poolAmountTopUp: '1000000' }, token)).body;
    // The host's ed25519_verify traps on the altered request: the simulation already fails.
    await expect(submit('fundAd', { ...topUp, amount: '9000000' })).rejects.toThrow(/Error\(Crypto, InvalidInput\)/);
    expect(await xlmBalance(deployment.adManager)).toBe(40_000_000n);
  });

  it('is closed: the rest goes back to the Maker and the ad is CLOSED on both sides', async () => {
    const res = await call(service, 'POST', `/v1/ads/${adId}/close`, { to: maker.publicKey() }, token);
    expect(res.status).toBe(200);
    expect((await confirm(adId, await submit('closeAd', res.body))).status).toBe(200);
    expect((await ad(adId)).status).toBe('CLOSED');
    expect(await onChainAd(adId)).toMatchObject({ available: 0n, closed: true });
    expect(await xlmBalance(deployment.adManager)).toBe(0n);
  });
});

describe('withdraws racing the same balance on the local Stellar network', () => {
  it('signs only what the ad holds, lands concurrent withdraws and a top-up in the ledger, and leaves the books equal to the AdManager', async () => {
    const created = (await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: evmRecipient, fundAmount: '50000000' }, token)).body;
    const adId: string = created.adId;
    expect((await confirm(adId, await submit('createAd', created))).status).toBe(200);
    const managerBefore = await xlmBalance(deployment.adManager);
    // Withdraws go to a fresh account, so what it receives is exactly what the AdManager paid out.
    const payee = Keypair.random();
    const relay = Keypair.random();
    await Promise.all([fund(server, payee.publicKey()), fund(server, relay.publicKey())]);
    const payeeBefore = await xlmBalance(payee.publicKey());

    // Two withdraws of 30 of the 50 asked at once: the books sign one; the other would overdraw the ad.
    const asks = await Promise.all([1, 2].map(() => call(service, 'POST', `/v1/ads/${adId}/withdraw`, { poolAmountWithdraw: '30000000', to: payee.publicKey() }, token)));
    expect(asks.map((a) => a.status).sort()).toEqual([200, 409]);
    const first = asks.find((a) => a.status === 200)!.body;
    // The rest (20) and a top-up (10), signed while the first withdraw is still unconfirmed.
    const second = (await call(service, 'POST', `/v1/ads/${adId}/withdraw`, { poolAmountWithdraw: '20000000', to: payee.publicKey() }, token)).body;
    const topUp = (await call(service, 'POST', `/v1/ads/${adId}/fund`, { poolAmountTopUp: '10000000' }, token)).body;
    expect((await call(service, 'POST', `/v1/ads/${adId}/withdraw`, { poolAmountWithdraw: '1', to: payee.publicKey() }, token)).status).toBe(409);

    // All three land concurrently, from three sources: the withdraws carry the Maker's signed authorisation
    // (the AdManager asks the ad's creator) while other accounts pay their fees. Each is confirmed twice at once.
    const hashes = await Promise.all([
      submitOperation(server, node.networkPassphrase, relay, stellarContractCall('withdrawFromAd', first), { authSigners: [maker] }),
      submitOperation(server, node.networkPassphrase, payee, stellarContractCall('withdrawFromAd', second), { authSigners: [maker] }),
      submitOperation(server, node.networkPassphrase, maker, stellarContractCall('fundAd', topUp)),
    ]);
    const confirms = await Promise.all(hashes.flatMap((h) => [confirm(adId, h.hash), confirm(adId, h.hash)]));
    expect(confirms.map((c) => c.status)).toEqual([200, 200, 200, 200, 200, 200]);

    // The books and the chain agree: 50 + 10 funded (poolAmount), 30 + 20 withdrawn, 10 available, nothing held.
    expect(await ad(adId)).toMatchObject({ poolAmount: '60000000', availableAmount: '10000000', lockedAmount: '0' });
    expect(await onChainAd(adId)).toMatchObject({ available: 10_000_000n, locked: 0n, closed: false });
    expect(await xlmBalance(deployment.adManager)).toBe(managerBefore - 40_000_000n);
    // The payee submitted the second withdraw itself: it received 50 and paid that transaction's fee.
    expect(await xlmBalance(payee.publicKey()) - payeeBefore).toBe(50_000_000n - BigInt(hashes[1].response.resultXdr.feeCharged().toString()));
  });
});

describe('the books audit on the local Stellar network', () => {
  it('reads each Stellar ad from the Soroban AdManager: after create, fund and withdraws it finds zero drift and checks everything', async () => {
    const report = await service.container.runAudit();
    expect(report).toMatchObject({ drifts: [], repairs: [], unchecked: 0 });
    // The ad of the racing withdraws is open; the closed ad is no longer audited.
    expect(report.ads).toBe(1);
  });

  it('reports a drift planted in a Stellar ad\'s books, with what the AdManager holds', async () => {
    const open = await service.knex('ads').where({ ad_chain_id: STELLAR, base_status: 'ACTIVE' }).first('id');
    await service.knex('ads').where({ id: open.id }).increment('pool_amount', 7);
    const report = await service.container.runAudit();
    expect(report.drifts).toEqual([{ kind: 'ad-balance', subject: open.id, detail: expect.stringMatching(/available 10000000, locked 0; books: in the contract 10000007, locked 0/) }]);
    expect(report.unchecked).toBe(0);
    await service.knex('ads').where({ id: open.id }).decrement('pool_amount', 7);
    expect((await service.container.runAudit()).drifts).toEqual([]);
  });
});

// Last: the ad it signs on the EVM chain stays PENDING (never submitted), which the books audit above would read.
describe('an ad that pays its Maker on the local Stellar network (issue 29)', () => {
  it('is refused at create with 422 naming creatorDstAddress (RECIPIENT_CANNOT_RECEIVE), changing nothing, while the address is no account: XLM can only be paid to one', async () => {
    // An EVM ad whose trades' deposits (XLM) unlock to the Maker on Stellar.
    const evmMaker = newEvmAccount();
    const evmToken = (await loginEvm(service, evmMaker)).body.tokens.access;
    const routes = await call(service, 'GET', `/v1/routes?adChainId=31337&orderChainId=${STELLAR}`);
    const xlmPaid = routes.body.data.find((r: { orderToken: { address: string } }) => r.orderToken.address === deployment.xlm).id;
    const rows = async (table: 'ads' | 'ad_requests') => Number((await service.knex(table).count({ n: '*' }))[0]!.n);
    const create = (creatorDstAddress: string) => call(service, 'POST', '/v1/ads/create', { routeId: xlmPaid, creatorDstAddress, fundAmount: '1000000000000000' }, evmToken);

    const fresh = Keypair.random().publicKey();
    const [adsBefore, requestsBefore] = [await rows('ads'), await rows('ad_requests')];
    const refused = await create(fresh);
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ statusCode: 422, error: 'Unprocessable Entity', code: 'RECIPIENT_CANNOT_RECEIVE' });
    expect(refused.body.message).toEqual([expect.stringMatching(new RegExp(`^creatorDstAddress cannot receive the order token: ${fresh} is no account on this network`))]);
    expect([await rows('ads'), await rows('ad_requests')]).toEqual([adsBefore, requestsBefore]);

    // The same address once it exists can be paid: the ad is signed.
    await fund(server, fresh);
    const taken = await create(fresh);
    expect(taken.status).toBe(200);
    expect(taken.body.adRecipient).toBe(fresh);
  }, 120_000);
});
