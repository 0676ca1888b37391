import { Contract, getBytes, Interface, JsonRpcProvider, Wallet, type InterfaceAbi } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adManagerAbi, evmTransaction, orderPortalAbi, type CallExtras, type EvmAction, type SignedResponse } from '../../client/evm.js';
import { createRelayerClient } from '../../client/index.js';
import { loadDevnetArtifacts } from '../../contracts/evm/artifacts.ts';
import { AD_CHAIN, devnetClient, eventually, ORDER_CHAIN, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * A whole EVM trade driven the way a dApp would: every API call through the generated client
 * package (client/: openapi-typescript + openapi-fetch), every transaction the package's
 * `evmTransaction` (client/evm.js) sent by a plain ethers Wallet on a JsonRpcProvider, the
 * ERC-20 approvals plain ethers; the devnet helper only reads balances. Along the way, the unlock order as a client meets it: `unlockDue`
 * on the trade, and the 409 with Retry-After for the unlock asked out of turn; and the deposit or the
 * lock reported to unlock/confirm while the trade is LOCKED, refused (422) with nothing recorded.
 */

const { makerKey, bridgerKey } = tradeParties();
const maker = new Wallet(makerKey!.privateKey);
const bridger = new Wallet(bridgerKey!.privateKey);

let service: TestService;
let devnet: DevnetClient;
const providers: JsonRpcProvider[] = [];

/**
 * A dApp's wallet on one devnet chain: ethers and nothing else. No response cache (ethers keeps
 * identical reads 250 ms by default): anvil mines at once, and a nonce read just before the previous
 * transaction was mined would come back stale ("nonce too low").
 */
function walletOn(chainId: string, key: string): Wallet {
  const provider = new JsonRpcProvider(service.devnet!.rpcUrls[chainId], undefined, { staticNetwork: true, pollingInterval: 100, cacheTimeout: -1 });
  providers.push(provider);
  return new Wallet(key, provider);
}

/** Submits an API response the way the package's README says: `wallet.sendTransaction(evmTransaction(...))`; the mined hash. */
async function submit(wallet: Wallet, action: EvmAction, signed: SignedResponse, extras?: CallExtras): Promise<string> {
  const sent = await wallet.sendTransaction(evmTransaction(action, signed, extras));
  const receipt = await sent.wait();
  expect(receipt?.status, `${action} ${sent.hash}`).toBe(1);
  return sent.hash;
}

/** The ERC-20 approval a deposit needs, in plain ethers. */
async function approve(wallet: Wallet, token: string, spender: string, amount: bigint): Promise<void> {
  const erc20 = new Contract(token, ['function approve(address spender, uint256 amount) returns (bool)'], wallet);
  await (await erc20.getFunction('approve')(spender, amount)).wait();
}

/** Signs in with SIWE through the client: challenge, personal_sign by the wallet, login. */
async function signIn(wallet: Wallet): Promise<string> {
  const api = createRelayerClient(service.url);
  const challenge = await api.POST('/v1/auth/challenge', { body: { address: wallet.address, chainKind: 'EVM' } });
  if (challenge.data?.chainKind !== 'EVM') throw new Error(`no SIWE challenge: ${JSON.stringify(challenge.error)}`);
  const message = challenge.data.message;
  const login = await api.POST('/v1/auth/login', { body: { chainKind: 'EVM', message, signature: await wallet.signMessage(message) } });
  return login.data!.tokens.access;
}

beforeAll(async () => {
  service = await startTestService({ DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0' });
  devnet = await devnetClient(service.devnet!.rpcUrls, service.devnet!.deployments);
});

afterAll(async () => {
  for (const provider of providers) provider.destroy();
  devnet?.close();
  await service?.close();
});

describe('a dApp on the typed client', () => {
  it('ships the AdManager and OrderPortal ABI of the compiled contracts: every call with its selector and payability, every event with its topic', async () => {
    const artifacts = await loadDevnetArtifacts();
    for (const [fragments, compiled] of [[adManagerAbi, artifacts.adManager.abi], [orderPortalAbi, artifacts.orderPortal.abi]] as const) {
      const shipped = new Interface(fragments as string[]);
      const contract = new Interface(compiled as InterfaceAbi);
      shipped.forEachFunction((fn) => {
        const real = contract.getFunction(fn.format('sighash'));
        expect(real?.selector, fn.format()).toBe(fn.selector);
        expect(real?.stateMutability, fn.format()).toBe(fn.stateMutability);
      });
      shipped.forEachEvent((event) => expect(contract.getEvent(event.topicHash)?.format('sighash'), event.format()).toBe(event.format('sighash')));
    }
    const names = (abi: readonly string[]) => new Set(abi.filter((entry) => entry.startsWith('function ')).map((entry) => entry.slice(9, entry.indexOf('('))));
    expect(names(adManagerAbi)).toEqual(new Set(['createAd', 'fundAd', 'withdrawFromAd', 'closeAd', 'lockForOrder', 'unlock', 'releaseLock']));
    expect(names(orderPortalAbi)).toEqual(new Set(['createOrder', 'unlock', 'refund', 'currentRoot', 'nextLeafIndex', 'isKnownRoot']));
  });

  it('settles a whole EVM trade: ad, deposit, lock, both unlocks in their order, both payouts', async () => {
    const makerToken = await signIn(maker);
    const bridgerToken = await signIn(bridger);
    const asMaker = createRelayerClient(service.url, { accessToken: () => makerToken });
    const asBridger = createRelayerClient(service.url, { accessToken: () => bridgerToken });
    const anyone = createRelayerClient(service.url);
    const signOrderHash = (wallet: Wallet, orderHash: string) => wallet.signMessage(getBytes(orderHash));
    const trade = async (id: string) => (await anyone.GET('/v1/trades/{id}', { params: { path: { id } } })).data!;

    const makerOnAdChain = walletOn(AD_CHAIN, makerKey!.privateKey);
    const bridgerOnOrderChain = walletOn(ORDER_CHAIN, bridgerKey!.privateKey);
    const routes = await anyone.GET('/v1/routes', { params: { query: { adChainId: AD_CHAIN, orderChainId: ORDER_CHAIN, symbol: 'TUSD' } } });
    const route = routes.data!.data.find((r) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD')!;

    // The Maker's ad: signed createAd call data, sent from the Maker's wallet, confirmed.
    const created = await asMaker.POST('/v1/ads/create', { body: { routeId: route.id, creatorDstAddress: maker.address, fundAmount: '1000', metadata: null } });
    expect(created.response.status).toBe(200);
    const adId = created.data!.adId;
    await approve(makerOnAdChain, route.adToken.address, created.data!.contractAddress, 1000n);
    const createTx = await submit(makerOnAdChain, 'createAd', created.data!);
    expect((await asMaker.POST('/v1/ads/{id}/confirm', { params: { path: { id: adId } }, body: { txHash: createTx } })).data).toEqual({ adId, success: true });
    expect((await anyone.GET('/v1/ads/{id}', { params: { path: { id: adId } } })).data).toMatchObject({ status: 'ACTIVE', availableAmount: '1000', metadata: null });

    // The Bridger's trade and deposit (approved first: create checks the allowance).
    const chains = (await anyone.GET('/v1/chains', { params: { query: { limit: 100 } } })).data!.data;
    const orderPortal = chains.find((chain) => chain.chainId === ORDER_CHAIN)!.orderPortalAddress!;
    await approve(bridgerOnOrderChain, route.orderToken.address, orderPortal, 100n);
    const opened = await asBridger.POST('/v1/trades/create', { body: { adId, routeId: route.id, amount: '100', bridgerDstAddress: bridger.address } });
    expect(opened.response.status).toBe(200);
    const { tradeId, reqContractDetails: order } = opened.data!;
    expect(await trade(tradeId)).toMatchObject({ status: 'PENDING', unlockDue: null });
    const depositTx = await submit(bridgerOnOrderChain, 'createOrder', order);
    expect((await asBridger.POST('/v1/trades/{id}/confirm', { params: { path: { id: tradeId } }, body: { txHash: depositTx } })).data).toMatchObject({ tradeId, success: true, duplicate: false });

    // The Maker's lock.
    const lock = await asMaker.POST('/v1/trades/{id}/lock', { params: { path: { id: tradeId } } });
    expect(lock.response.status).toBe(200);
    const lockTx = await submit(makerOnAdChain, 'lockForOrder', lock.data!);
    await asMaker.POST('/v1/trades/{id}/confirm', { params: { path: { id: tradeId } }, body: { txHash: lockTx } });
    expect(await trade(tradeId)).toMatchObject({ status: 'LOCKED', unlockDue: 'MAKER', unlockableBy: ['MAKER', 'BRIDGER'] });
    // A confirmation is of the kind its endpoint is for: the deposit or the lock sent to unlock/confirm is 422, nothing recorded.
    for (const txHash of [depositTx, lockTx]) {
      const wrongKind = await asMaker.POST('/v1/trades/{id}/unlock/confirm', { params: { path: { id: tradeId } }, body: { txHash } });
      expect(wrongKind.response.status).toBe(422);
      expect(JSON.stringify(wrongKind.error?.message)).toMatch(/not an unlock/);
    }
    expect(await trade(tradeId)).toMatchObject({ status: 'LOCKED', bridgerClaimed: false, unlockDue: 'MAKER' });

    // The Maker's ad-chain unlock (pays the Bridger), once the proof is ready.
    const makerSignature = await signOrderHash(maker, order.orderHash);
    const makerUnlock = await eventually('the proof',
      () => asMaker.POST('/v1/trades/{id}/unlock', { params: { path: { id: tradeId } }, body: { signature: makerSignature } }),
      (answer) => answer.response.status !== 409);
    expect(makerUnlock.data).toMatchObject({ chainId: AD_CHAIN, orderHash: order.orderHash });
    // Out of turn (the proof is ready now): the Bridger's default unlock (the order side) waits for the ad side to be confirmed, and says so (and that it may take the ad side itself).
    const early = await asBridger.POST('/v1/trades/{id}/unlock', { params: { path: { id: tradeId } }, body: { signature: await signOrderHash(bridger, order.orderHash) } });
    expect(early.response.status).toBe(409);
    expect(early.response.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(early.error?.message).toMatch(/unlock order: the ad-chain unlock \(which pays the Bridger\) comes first.*"side": "ad"/);

    const bridgerBefore = await devnet.balanceOf(AD_CHAIN, bridger.address);
    const adUnlockTx = await submit(makerOnAdChain, 'unlock', makerUnlock.data!);
    await asMaker.POST('/v1/trades/{id}/unlock/confirm', { params: { path: { id: tradeId } }, body: { txHash: adUnlockTx } });
    expect(await devnet.balanceOf(AD_CHAIN, bridger.address)).toBe(bridgerBefore + 100n);
    expect(await trade(tradeId)).toMatchObject({ status: 'LOCKED', bridgerClaimed: true, unlockDue: 'BRIDGER' });

    // The Bridger's order-chain unlock (pays the Maker): the trade settles.
    const bridgerUnlock = await asBridger.POST('/v1/trades/{id}/unlock', { params: { path: { id: tradeId } }, body: { signature: await signOrderHash(bridger, order.orderHash) } });
    expect(bridgerUnlock.data).toMatchObject({ chainId: ORDER_CHAIN, contractAddress: order.contractAddress });
    const makerBefore = await devnet.balanceOf(ORDER_CHAIN, maker.address);
    const orderUnlockTx = await submit(bridgerOnOrderChain, 'unlock', bridgerUnlock.data!);
    await asBridger.POST('/v1/trades/{id}/unlock/confirm', { params: { path: { id: tradeId } }, body: { txHash: orderUnlockTx } });
    expect(await devnet.balanceOf(ORDER_CHAIN, maker.address)).toBe(makerBefore + 100n);
    expect(await trade(tradeId)).toMatchObject({ status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true, unlockDue: null });
    const listed = await anyone.GET('/v1/trades/all', { params: { query: { adId } } });
    expect(listed.data!.data.map((t) => t.id)).toEqual([tradeId]);
  });
});
