import { Wallet } from 'ethers';
import { Web3 } from 'web3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvmDepositFunding } from '../../chains/evm/order-chain-reads.ts';
import { anvilAccounts } from '../../devnet/accounts.ts';
import { AD_CHAIN, devnetClient, eventually, ORDER_CHAIN, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import { stepOf } from '../support/pushed-stream.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { openSse } from '../support/sse-client.ts';
import { call, loginEvm, newEvmAccount, type EvmAccount } from '../support/wallets.ts';

/**
 * Issue 20, item 2: reserving an ad's liquidity must cost the reserver something and be bounded.
 * Before: any signed-in wallet, holding nothing, reserved an ad's whole balance for 30 minutes,
 * again and again; honest Bridgers got 409 and the Maker could neither withdraw nor close.
 * Now (on the devnet, real tokens, real contracts): the Bridger must hold the deposit and have
 * approved the OrderPortal for it, a wallet's open reservations of a token are covered by its
 * balance together, a wallet and an ad carry at most MAX_OPEN_RESERVATIONS_PER_WALLET and _PER_AD
 * unfunded reservations, and a reservation ends with its deposit request (here 8 s), unless the
 * chain shows the deposit happened.
 */

const { makerKey, maker } = tradeParties();
const web3 = new Web3();
/** Funded anvil accounts 3..9 (10^12 TUSD and 10,000 ETH each on both chains), as web3 accounts for sign-in. */
const funded = anvilAccounts(10).slice(3).map((a) => ({ key: a.privateKey, account: web3.eth.accounts.privateKeyToAccount(a.privateKey) }));

const RESERVATION_TTL_SECONDS = 8;
const PER_WALLET = 2;
const PER_AD = 3;

let service: TestService;
let devnet: DevnetClient;
let makerToken: string;
let routeId: string;

const adOf = async (id: string) => (await call(service, 'GET', `/v1/ads/${id}`)).body;
const tokenOf = async (account: EvmAccount) => (await loginEvm(service, account)).body.tokens.access as string;
const reserve = (token: string, adId: string, amount: bigint, to = maker.address) =>
  call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: amount.toString(), bridgerDstAddress: to }, token);

async function createAd(amount: bigint): Promise<string> {
  const created = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: amount.toString() }, makerToken);
  expect(created.status).toBe(200);
  await devnet.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', amount);
  const txHash = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', created.body);
  expect((await call(service, 'POST', `/v1/ads/${created.body.adId}/confirm`, { txHash }, makerToken)).status).toBe(200);
  return created.body.adId;
}

beforeAll(async () => {
  service = await startTestService({
    DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0',
    TRADE_RESERVATION_TTL_SECONDS: String(RESERVATION_TTL_SECONDS),
    MAX_OPEN_RESERVATIONS_PER_WALLET: String(PER_WALLET),
    MAX_OPEN_RESERVATIONS_PER_AD: String(PER_AD),
  });
  devnet = await devnetClient(service.devnet!.rpcUrls, service.devnet!.deployments);
  makerToken = (await loginEvm(service, maker)).body.tokens.access;
  const routes = await call(service, 'GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=TUSD`);
  routeId = routes.body.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;
});

afterAll(async () => {
  devnet?.close();
  await service?.close();
});

describe('reserving liquidity costs the reserver the deposit it promises', () => {
  it('refuses an unfunded wallet (422 naming amount) and reserves nothing', async () => {
    const adId = await createAd(1_000n);
    const unfunded = newEvmAccount();
    const res = await reserve(await tokenOf(unfunded), adId, 1_000n);
    expect(res.status).toBe(422);
    expect(res.body.message).toEqual([expect.stringMatching(new RegExp(`^amount 1000 exceeds what ${unfunded.address} allows the OrderPortal`))]);
    expect(await adOf(adId)).toMatchObject({ availableAmount: '1000', lockedAmount: '0' });
  });

  it('refuses a funded wallet that has not approved the OrderPortal, then one whose balance cannot cover its reservations together', async () => {
    const adId = await createAd(1_000n);
    const { key, account } = funded[0]!;
    const token = await tokenOf(account);
    const noAllowance = await reserve(token, adId, 500n);
    expect(noAllowance.status).toBe(422);
    expect(noAllowance.body.message).toEqual([expect.stringMatching(/allows the OrderPortal .* \(0\): approve it first$/)]);
    await devnet.approve(ORDER_CHAIN, key, 'orderPortal', 500n);
    expect((await reserve(token, adId, 500n)).status).toBe(200);
    // Its whole balance but this, spent elsewhere: the open reservation of 500 is no longer covered twice.
    const balance = await devnet.balanceOf(ORDER_CHAIN, account.address);
    const sink = newEvmAccount().address;
    await devnet.contract(ORDER_CHAIN, 'testErc20', key).getFunction('transfer')(sink, balance - 700n).then((tx: any) => tx.wait());
    const beyond = await reserve(token, adId, 300n);
    expect(beyond.status).toBe(422);
    expect(beyond.body.message).toEqual([expect.stringMatching(new RegExp(`^amount 300 is more than ${account.address} holds of TUSD .* \\(700, of which 500 is reserved by its other open trades\\)$`))]);
    expect((await reserve(token, adId, 200n)).status).toBe(200);
    expect(await adOf(adId)).toMatchObject({ availableAmount: '300' });
  });

  it('reads a native balance for a native-coin order token (no allowance), and an ERC-20 balance with its allowance', async () => {
    const rpc = new Web3(service.devnet!.rpcUrls[ORDER_CHAIN]!);
    const { orderPortal, testErc20 } = service.devnet!.deployments[ORDER_CHAIN]!;
    const zero = '0x0000000000000000000000000000000000000000';
    expect(await readEvmDepositFunding(rpc, zero, newEvmAccount().address, orderPortal)).toEqual({ balance: 0n, allowance: null });
    expect((await readEvmDepositFunding(rpc, zero, funded[6]!.account.address, orderPortal)).balance).toBeGreaterThan(10n ** 21n);
    await devnet.approve(ORDER_CHAIN, funded[6]!.key, 'orderPortal', 77n);
    expect(await readEvmDepositFunding(rpc, testErc20, funded[6]!.account.address, orderPortal)).toEqual({ balance: 10n ** 12n, allowance: 77n });
  });
});

describe('many wallets cannot hold an ad for free', () => {
  it('caps open unfunded reservations per wallet and per ad, then frees them when their deposit requests run out', async () => {
    const adId = await createAd(10_000n);
    const wallets = await Promise.all(funded.slice(1, 5).map(async ({ key, account }) => {
      await devnet.approve(ORDER_CHAIN, key, 'orderPortal', 1_000n);
      return { account, token: await tokenOf(account) };
    }));
    const [first, second, third, fourth] = wallets as [typeof wallets[0], typeof wallets[0], typeof wallets[0], typeof wallets[0]];
    expect((await reserve(first.token, adId, 100n)).status).toBe(200);
    expect((await reserve(first.token, adId, 100n)).status).toBe(200);
    const thirdOfOne = await reserve(first.token, adId, 100n);
    expect(thirdOfOne.status).toBe(409);
    expect(thirdOfOne.body.message).toMatch(new RegExp(`^${first.account.address} already has 2 trades awaiting their deposit \\(at most ${PER_WALLET}\\)`));
    expect((await reserve(second.token, adId, 100n)).status).toBe(200);
    // The ad carries PER_AD (3) unfunded reservations: a fourth wallet is told to come back.
    const full = await reserve(third.token, adId, 100n);
    expect(full.status).toBe(409);
    expect(full.body.message).toMatch(new RegExp(`^ad ${adId} already has 3 trades awaiting their deposit \\(at most ${PER_AD}\\)`));
    expect(await adOf(adId)).toMatchObject({ availableAmount: '9700' });
    // The Maker cannot close while they are open, but they end with their deposit requests (no deposit on chain).
    expect((await call(service, 'POST', `/v1/ads/${adId}/close`, { to: maker.address }, makerToken)).status).toBe(409);
    await eventually('the reservations run out', () => adOf(adId), (ad) => ad.availableAmount === '10000', 60_000);
    expect((await reserve(fourth.token, adId, 100n)).status).toBe(200);
    await eventually('the last one runs out too', () => adOf(adId), (ad) => ad.availableAmount === '10000', 60_000);
    expect((await call(service, 'POST', `/v1/ads/${adId}/close`, { to: maker.address }, makerToken)).status).toBe(200);
  });
});

describe('a reservation whose deposit happened', () => {
  it('is not given back when its request runs out unconfirmed: the chain shows the deposit, and its late confirmation finds the liquidity', async () => {
    const adId = await createAd(500n);
    const { key, account } = funded[5]!;
    const token = await tokenOf(account);
    await devnet.approve(ORDER_CHAIN, key, 'orderPortal', 500n);
    const created = await reserve(token, adId, 500n, account.address);
    expect(created.status).toBe(200);
    const { tradeId, reqContractDetails: order } = created.body;
    const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', key, 'createOrder', order, { orderParams: order.orderParams });
    // Well past the request's deadline and the expiry timer (deadline + 10 s): still PENDING, still reserved.
    const deadlineMs = Number(order.deadline) * 1000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, deadlineMs + 15_000 - Date.now())));
    expect((await call(service, 'GET', `/v1/trades/${tradeId}`)).body.status).toBe('PENDING');
    expect(await adOf(adId)).toMatchObject({ availableAmount: '0' });
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, token)).status).toBe(200);
    expect((await call(service, 'GET', `/v1/trades/${tradeId}`)).body.status).toBe('DEPOSITED');
  });
});

describe('one balance cycled through many wallets', () => {
  it('holds against an ad no more than the wallets hold when a Bridger asks: the reservations whose tokens moved on are ended', async () => {
    const adId = await createAd(3_000n);
    const B = 1_000n;
    // The attacker: three fresh wallets, gas in each, B tokens in the first, each approving the portal.
    const funder = new Wallet(funded[6]!.key, devnet.provider(ORDER_CHAIN));
    const attackers = [newEvmAccount(), newEvmAccount(), newEvmAccount()];
    for (const wallet of attackers) {
      await (await funder.sendTransaction({ to: wallet.address, value: 10n ** 17n })).wait();
      await devnet.approve(ORDER_CHAIN, wallet.privateKey, 'orderPortal', B);
    }
    await devnet.contract(ORDER_CHAIN, 'testErc20', funded[6]!.key).getFunction('transfer')(attackers[0]!.address, B).then((tx: any) => tx.wait());
    const trades: string[] = [];
    for (const [i, wallet] of attackers.entries()) {
      const created = await reserve(await tokenOf(wallet), adId, B);
      expect(created.status).toBe(200); // each wallet holds B when it reserves
      trades.push(created.body.tradeId);
      const next = attackers[i + 1];
      if (next) await devnet.contract(ORDER_CHAIN, 'testErc20', wallet.privateKey).getFunction('transfer')(next.address, B).then((tx: any) => tx.wait());
    }
    // B tokens hold 3B of the ad: all of it (and PER_AD reservations).
    expect(await adOf(adId)).toMatchObject({ availableAmount: '0' });

    // An honest Bridger, funded and approved, asks: the two reservations whose wallets no longer hold B are ended.
    const honest = funded[6]!;
    await devnet.approve(ORDER_CHAIN, honest.key, 'orderPortal', 500n);
    const created = await reserve(await tokenOf(honest.account), adId, 500n);
    expect(created.status).toBe(200);
    const statuses = await Promise.all(trades.map(async (id) => (await call(service, 'GET', `/v1/trades/${id}`)).body.status));
    expect(statuses).toEqual(['EXPIRED', 'EXPIRED', 'PENDING']);
    // Their ends are pushed as a timer's would be: the trade's stream closes on the reservation's expiry.
    for (const id of trades.slice(0, 2)) {
      const replay = await openSse(`${service.url}/v1/trades/${id}/events`);
      await replay.ended;
      expect(replay.messages.map(stepOf)).toEqual(['trade.created', 'trade.expired', 'trade.status_changed:EXPIRED']);
      expect(replay.messages[1]!.data.data).toMatchObject({ tradeId: id, status: 'EXPIRED', reason: 'reservation' });
    }
    // What is still held by the attacker is what its wallets hold: B.
    expect(await adOf(adId)).toMatchObject({ availableAmount: '1500' });
  });

  it('leaves alone a wallet whose balance went into the deposit of one of its reservations: the rest is still backed', async () => {
    const adId = await createAd(1_000n);
    const funder = new Wallet(funded[6]!.key, devnet.provider(ORDER_CHAIN));
    const bridger = newEvmAccount();
    await (await funder.sendTransaction({ to: bridger.address, value: 10n ** 17n })).wait();
    await devnet.contract(ORDER_CHAIN, 'testErc20', funded[6]!.key).getFunction('transfer')(bridger.address, 200n).then((tx: any) => tx.wait());
    await devnet.approve(ORDER_CHAIN, bridger.privateKey, 'orderPortal', 200n);
    const token = await tokenOf(bridger);
    const first = (await reserve(token, adId, 100n)).body;
    const second = (await reserve(token, adId, 100n)).body;
    // It deposits the first (its balance drops to 100), not confirmed yet; someone takes the rest of the ad.
    await devnet.send(ORDER_CHAIN, 'orderPortal', bridger.privateKey, 'createOrder', first.reqContractDetails, { orderParams: first.reqContractDetails.orderParams });
    const other = await tokenOf(funded[6]!.account);
    await devnet.approve(ORDER_CHAIN, funded[6]!.key, 'orderPortal', 800n);
    expect((await reserve(other, adId, 800n)).status).toBe(200);
    // A Bridger finds the ad taken: every wallet is read again, and each still backs what it has not deposited.
    // (Another wallet than `other`: with its reservation of the test before it may hold its per-wallet cap,
    // and a caller at its cap is refused before any re-read.)
    const asker = funded[4]!;
    await devnet.approve(ORDER_CHAIN, asker.key, 'orderPortal', 100n);
    const turnedAway = await reserve(await tokenOf(asker.account), adId, 100n);
    expect(turnedAway.status).toBe(409);
    expect(turnedAway.body.message).toMatch(new RegExp(`^ad ${adId} cannot cover 100 `));
    // "The ad cannot cover it" by code, not by its English.
    expect(turnedAway.body.code).toBe('INSUFFICIENT_LIQUIDITY');
    for (const trade of [first, second]) expect((await call(service, 'GET', `/v1/trades/${trade.tradeId}`)).body.status).toBe('PENDING');
    expect(await adOf(adId)).toMatchObject({ availableAmount: '0' });
  });
});
