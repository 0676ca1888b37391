import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilAccounts } from '../../devnet/accounts.ts';
import { AD_CHAIN, devnetClient, ORDER_CHAIN, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import { startRpcCounter, type RpcCounter } from '../support/rpc-counter.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { call, loginEvm, newEvmAccount, type EvmAccount } from '../support/wallets.ts';

/**
 * Issue 33, finding 4: one request must not fan out into the chains. A new wallet holding nothing,
 * asking an ad for more than it holds, used to make the service read again every wallet holding a
 * reservation on that ad (balance, each order) before its own balance was looked at: about 3 RPC
 * calls per such wallet per request. Counted here where an RPC provider would bill them: a counting
 * relay in front of each anvil of the devnet, registered as the chains' RPC URLs.
 */

const { makerKey, maker } = tradeParties();
const funder = anvilAccounts(10)[6]!;
/** The re-read of an ad's reservations runs at most once per this many seconds per ad. */
const RECHECK_SECONDS = 6;
const RESERVATION = 1_000n;
const AD_POOL = 1_000_000n;
const MORE_THAN_THE_AD = 2_000_000n;

let service: TestService;
let devnet: DevnetClient;
let makerToken: string;
let routeId: string;
let adId: string;
const counters: Record<string, RpcCounter> = {};
/** The wallets holding reservations on the ad, two each. */
const holders: EvmAccount[] = [];

const tokenOf = async (account: EvmAccount) => (await loginEvm(service, account)).body.tokens.access as string;
const reserve = (token: string, amount: bigint) =>
  call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: amount.toString(), bridgerDstAddress: maker.address }, token);
/**
 * The calls requests cause: the providers' own upkeep is not theirs (eth_blockNumber, a few head reads a
 * minute per provider to rank them and measure their lag; eth_chainId, at most once a minute per
 * client, to check the node serves the registered chain), whatever the traffic.
 */
const UPKEEP = new Set(['eth_blockNumber', 'eth_chainId']);
const allCalls = () => [...counters[AD_CHAIN]!.calls, ...counters[ORDER_CHAIN]!.calls].filter((call) => !UPKEEP.has(call.method));
const resetCounts = () => Object.values(counters).forEach((c) => c.reset());

/** Fresh wallets holding `wei` of the order chain's ETH. */
async function fundedWallets(n: number, wei: bigint): Promise<EvmAccount[]> {
  const sender = new Wallet(funder.privateKey, devnet.provider(ORDER_CHAIN));
  const wallets: EvmAccount[] = [];
  for (let i = 0; i < n; i++) {
    const wallet = newEvmAccount();
    await (await sender.sendTransaction({ to: wallet.address, value: wei })).wait();
    wallets.push(wallet);
  }
  return wallets;
}

/** `n` more wallets, each with two reservations of RESERVATION on the ad. */
async function addHolders(n: number): Promise<void> {
  for (const wallet of await fundedWallets(n, 10n ** 15n)) {
    const token = await tokenOf(wallet);
    for (let i = 0; i < 2; i++) expect((await reserve(token, RESERVATION)).status).toBe(200);
    holders.push(wallet);
  }
}

/** The RPC calls one unfunded wallet's request for more than the ad holds causes, and its answer. */
async function unfundedRequest(): Promise<{ calls: ReturnType<typeof allCalls>; status: number; message: unknown; wallet: string }> {
  const wallet = newEvmAccount();
  const token = await tokenOf(wallet);
  resetCounts();
  const res = await reserve(token, MORE_THAN_THE_AD);
  return { calls: allCalls(), status: res.status, message: res.body.message, wallet: wallet.address.toLowerCase() };
}

beforeAll(async () => {
  service = await startTestService({
    DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', UNBACKED_RESERVATIONS_RECHECK_SECONDS: String(RECHECK_SECONDS),
  });
  devnet = await devnetClient(service.devnet!.rpcUrls, service.devnet!.deployments);
  // The service reaches both chains through the counting relays from now on.
  for (const chainId of [AD_CHAIN, ORDER_CHAIN]) {
    counters[chainId] = await startRpcCounter(service.devnet!.rpcUrls[chainId]!);
    await service.knex('chains').where({ chain_id: chainId }).update({ rpc_url: counters[chainId]!.url, rpc_urls: [counters[chainId]!.url], rpc_quorum: null });
  }
  await service.container.registryCache.chain('a chain nobody registered'); // a miss reloads the registry at once
  expect((await service.container.registryCache.chain(ORDER_CHAIN))!.rpcUrl).toBe(counters[ORDER_CHAIN]!.url);

  makerToken = (await loginEvm(service, maker)).body.tokens.access;
  const routes = await call(service, 'GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=ETH`);
  routeId = routes.body.data.find((r: any) => r.adToken.symbol === 'ETH' && r.orderToken.symbol === 'ETH').id;
  // An ETH ad: the order token is the native coin, so there is no allowance to stop anyone before the balance.
  const created = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: AD_POOL.toString() }, makerToken);
  expect(created.status).toBe(200);
  const txHash = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', created.body);
  expect((await call(service, 'POST', `/v1/ads/${created.body.adId}/confirm`, { txHash }, makerToken)).status).toBe(200);
  adId = created.body.adId;
}, 120_000);

afterAll(async () => {
  devnet?.close();
  await service?.close();
  await Promise.all(Object.values(counters).map((c) => c.close()));
});

describe('a wallet that cannot fund what it asks for', () => {
  it('is refused on its own balance alone: one RPC call, whatever the number of wallets holding reservations on the ad', async () => {
    const perK: Record<number, number> = {};
    const answers: Awaited<ReturnType<typeof unfundedRequest>>[] = [];
    for (const k of [1, 8]) {
      await addHolders(k - holders.length);
      const answer = await unfundedRequest();
      console.log(`K=${k}: ${answer.calls.length} RPC calls, ${answer.status}`);
      perK[k] = answer.calls.length;
      answers.push(answer);
    }
    expect(perK).toEqual({ 1: 1, 8: 1 });
    for (const { calls, status, message, wallet } of answers) {
      expect(status).toBe(422);
      expect(message).toEqual([expect.stringMatching(new RegExp(`^amount ${MORE_THAN_THE_AD} is more than ${wallet} holds of ETH .*\\(0\\)$`, 'i'))]);
      // Its own balance, and nothing of anyone else's.
      expect(calls).toEqual([{ method: 'eth_getBalance', params: [expect.stringMatching(new RegExp(`^${wallet}$`, 'i')), 'latest'] }]);
    }
    // The holders' reservations are untouched: 16 of RESERVATION.
    const ad = (await call(service, 'GET', `/v1/ads/${adId}`)).body;
    expect(ad.availableAmount).toBe((AD_POOL - 16n * RESERVATION).toString());
  }, 180_000);

  it('50 such requests make 50 RPC calls in all', async () => {
    const tokens = await Promise.all(Array.from({ length: 50 }, () => tokenOf(newEvmAccount())));
    resetCounts();
    const started = Date.now();
    const answers = await Promise.all(tokens.map((token) => reserve(token, MORE_THAN_THE_AD)));
    const calls = allCalls();
    console.log(`50 unfunded requests: ${calls.length} RPC calls in ${Date.now() - started} ms`);
    expect(calls.length).toBe(50);
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(422));
    expect(new Set(calls.map((c) => c.method))).toEqual(new Set(['eth_getBalance']));
  }, 120_000);
});

describe('wallets that can fund, finding the ad taken', () => {
  it('share one re-read of the ad\'s reservations per window: 50 requests cost 50 balance reads and one re-read', async () => {
    expect(holders).toHaveLength(8);
    // A funded wallet may make the service look again at who holds the ad; 50 of them at once share one look.
    const askers = await fundedWallets(1, 10n ** 16n);
    const token = await tokenOf(askers[0]!);
    // Past the window of any re-read before: this burst starts one.
    await new Promise((resolve) => setTimeout(resolve, RECHECK_SECONDS * 1000));
    resetCounts();
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 50 }, () => reserve(token, MORE_THAN_THE_AD)));
    const calls = allCalls();
    console.log(`50 funded requests: ${calls.length} RPC calls in ${Date.now() - started} ms`);
    expect(calls.length).toBe(50 + holders.length * 3);
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(409));
    // Per holder: its balance and the state of each of its two orders; per request: the asker's balance.
    const reread = holders.length * 3;
    const holderBalances = calls.filter((c) => c.method === 'eth_getBalance' && c.params[0] !== askers[0]!.address.toLowerCase() && c.params[0] !== askers[0]!.address);
    expect(holderBalances).toHaveLength(holders.length);
    expect(calls.length).toBe(50 + reread);

    // Within the window the next request reads only its own balance; after it, one re-read again.
    resetCounts();
    expect((await reserve(token, MORE_THAN_THE_AD)).status).toBe(409);
    expect(allCalls()).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, RECHECK_SECONDS * 1000));
    resetCounts();
    expect((await reserve(token, MORE_THAN_THE_AD)).status).toBe(409);
    expect(allCalls()).toHaveLength(1 + reread);
  }, 180_000);
});

describe('the re-read still frees what the chain no longer backs', () => {
  it('ends the reservations of a holder whose balance moved on, at the first request after the window', async () => {
    // The first holder sends all it has away (keeping the gas): its two reservations are unbacked now.
    const holder = holders[0]!;
    const provider = devnet.provider(ORDER_CHAIN);
    const balance = await provider.getBalance(holder.address);
    const gasPrice = (await provider.getFeeData()).gasPrice! * 2n;
    const sender = new Wallet(holder.privateKey, provider);
    await (await sender.sendTransaction({ type: 0, to: newEvmAccount().address, value: balance - 21_000n * gasPrice, gasLimit: 21_000n, gasPrice })).wait();
    expect(await provider.getBalance(holder.address)).toBe(0n);
    await new Promise((resolve) => setTimeout(resolve, RECHECK_SECONDS * 1000));
    const asker = (await fundedWallets(1, 10n ** 16n))[0]!;
    // The ad holds 1,000,000 - 16,000; 984,000 + 2,000 is what the ad holds once the two are freed.
    const res = await reserve(await tokenOf(asker), AD_POOL - 14n * RESERVATION);
    expect(res.status).toBe(200);
    const ad = (await call(service, 'GET', `/v1/ads/${adId}`)).body;
    expect(ad.availableAmount).toBe('0');
  }, 120_000);
});
