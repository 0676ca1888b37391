import { Contract, type InterfaceAbi } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdsService, type AdsService } from '../../ads/service.ts';
import { uuidToBytes32 } from '../../chains/address.ts';
import { createOrderChainReader } from '../../chains/order-chain.ts';
import { loadDevnetArtifacts } from '../../contracts/evm/artifacts.ts';
import type { ChainStateReader } from '../../chains/state.ts';
import type { Principal } from '../../domain/principal.ts';
import { AD_CHAIN, devnetClient, ORDER_CHAIN, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { call } from '../support/wallets.ts';

/**
 * Issue 20, items 4 and 5, on the devnet: the ads use cases over the real database, the real
 * relayer key, real AdManager transactions on anvil; only the service's clock is moved (pinned
 * through `now`), so that "after the deadline and the grace" needs no waiting. The chain's own
 * clock is real: every transaction here is mined well before its deadline, as a client would send it.
 */

const { makerKey, maker } = tradeParties();
const TTL = 600;
const GRACE = 900;
/** Past any request's deadline and grace. */
const LATER = (TTL + GRACE + 60) * 1000;

let service: TestService;
let devnet: DevnetClient;
let ads: AdsService;
let clock: number;
let routeId: string;
let onChain: Contract;
const principal: Principal = { userId: 'maker', sessionId: 'session', wallets: { EVM: maker.address } };

const books = async (adId: string) => (await call(service, 'GET', `/v1/ads/${adId}`)).body;
const chainAd = async (adId: string) => {
  const ad = await onChain.getFunction('ads')(uuidToBytes32(adId));
  return { available: ad.available as bigint, locked: ad.locked as bigint };
};

async function createdAd(amount: bigint): Promise<string> {
  const signed = await ads.create(principal, { routeId, creatorDstAddress: maker.address, fundAmount: amount.toString() });
  await devnet.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', amount);
  await ads.confirm(principal, signed.adId!, await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', signed));
  return signed.adId!;
}

beforeAll(async () => {
  service = await startTestService({ DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0' });
  devnet = await devnetClient(service.devnet!.rpcUrls, service.devnet!.deployments);
  clock = Date.now();
  const { knex, container } = service;
  ads = createAdsService({
    knex, registryCache: container.registryCache, signers: container.signers, verifier: container.verifier, chainState: container.chainState,
    orderChainReader: createOrderChainReader(container.chains),
    settings: { signedRequestTtlSeconds: TTL, confirmGraceSeconds: GRACE, maxPendingAdsPerUser: 20, maxOpenAdRequestsPerUser: 50 }, now: () => clock,
  });
  const routes = await call(service, 'GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=TUSD`);
  routeId = routes.body.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;
  const artifacts = await loadDevnetArtifacts();
  onChain = new Contract(service.devnet!.deployments[AD_CHAIN]!.adManager, artifacts.adManager.abi as InterfaceAbi, devnet.provider(AD_CHAIN));
});

afterAll(async () => {
  devnet?.close();
  await service?.close();
});

describe('a transaction the AdManager accepted, confirmed after its deadline and grace', () => {
  it('confirms a late create: the ad becomes ACTIVE with its pool', async () => {
    const signed = await ads.create(principal, { routeId, creatorDstAddress: maker.address, fundAmount: '300' });
    await devnet.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', 300n);
    const txHash = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', signed);
    clock += LATER;
    // Meanwhile the Maker tried to fund it (the holds of lapsed requests are settled first): refused, the ad is not on chain yet.
    await expect(ads.fund(principal, signed.adId!, '5')).rejects.toThrow(/not on chain yet/);

    await ads.confirm(principal, signed.adId!, txHash);
    expect(await books(signed.adId!)).toMatchObject({ status: 'ACTIVE', poolAmount: '300', availableAmount: '300' });
    expect(await chainAd(signed.adId!)).toEqual({ available: 300n, locked: 0n });
    // Again: changes nothing.
    await ads.confirm(principal, signed.adId!, txHash);
    expect(await books(signed.adId!)).toMatchObject({ poolAmount: '300', availableAmount: '300' });
  });

  it('credits a late fund, even after its request lapsed while the Maker did something else', async () => {
    const adId = await createdAd(100n);
    const fund = await ads.fund(principal, adId, '50');
    await devnet.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', 50n);
    const txHash = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'fundAd', fund, {});
    clock += LATER;
    await ads.update(principal, adId, { metadata: { note: 'settles the lapsed fund request first' } });
    expect(await books(adId)).toMatchObject({ poolAmount: '100', availableAmount: '100' });

    await ads.confirm(principal, adId, txHash);
    expect(await books(adId)).toMatchObject({ poolAmount: '150', availableAmount: '150' });
    expect(await chainAd(adId)).toEqual({ available: 150n, locked: 0n });
  });
});

describe('a withdraw whose hold lapses unconfirmed', () => {
  it('is not given back when the chain paid it out; a withdraw never sent is', async () => {
    const adId = await createdAd(500n);
    const paid = await ads.withdraw(principal, adId, '200', maker.address);
    const paidTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'withdrawFromAd', paid, {});
    await ads.withdraw(principal, adId, '100', maker.address); // signed, never sent
    expect(await books(adId)).toMatchObject({ availableAmount: '200' });
    clock += LATER;

    // The holds lapse: the chain says the first ran (its authToken is spent), the second never did.
    await ads.update(principal, adId, { metadata: { note: 'settles lapsed holds' } });
    expect(await books(adId)).toMatchObject({ poolAmount: '500', availableAmount: '300' });
    expect(await chainAd(adId)).toEqual({ available: 300n, locked: 0n });
    const statuses = await service.knex('ad_requests').where({ ad_id: adId, action: 'withdrawFromAd' }).orderBy('created_at').pluck('status');
    expect(statuses).toEqual(['EXECUTED', 'EXPIRED']);
    // Nothing can reserve or withdraw what left: 300 is all there is.
    await expect(ads.withdraw(principal, adId, '301', maker.address)).rejects.toThrow(/exceeds the available balance 300/);

    // Its confirmation, however late, settles the books with the chain.
    await ads.confirm(principal, adId, paidTx);
    expect(await books(adId)).toMatchObject({ poolAmount: '500', availableAmount: '300' });
    const [ad] = await service.knex('ads').where({ id: adId }).select('paid_out_amount', 'withdrawing_amount');
    expect(ad).toEqual({ paid_out_amount: '200', withdrawing_amount: '0' });
  });
});

describe('a withdraw carried out before a close but confirmed after it', () => {
  it('is confirmed, and the closed ad books still equal what the chain paid out', async () => {
    const adId = await createdAd(500n);
    const withdraw = await ads.withdraw(principal, adId, '200', maker.address);
    const withdrawTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'withdrawFromAd', withdraw, {});
    const close = await ads.close(principal, adId, maker.address);
    const closeTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'closeAd', close, {});
    expect(await chainAd(adId)).toEqual({ available: 0n, locked: 0n });

    await ads.confirm(principal, adId, closeTx);
    expect(await books(adId)).toMatchObject({ status: 'CLOSED', poolAmount: '500', availableAmount: '0' });
    await ads.confirm(principal, adId, withdrawTx);
    const statuses = await service.knex('ad_requests').where({ ad_id: adId }).orderBy('created_at').pluck('status');
    expect(statuses).toEqual(['CONFIRMED', 'CONFIRMED', 'CONFIRMED']);
    const [ad] = await service.knex('ads').where({ id: adId }).select('paid_out_amount', 'withdrawing_amount');
    expect(ad).toEqual({ paid_out_amount: '500', withdrawing_amount: '0' });
    // Again: a repeat, nothing changes.
    await ads.confirm(principal, adId, withdrawTx);
    expect(await books(adId)).toMatchObject({ status: 'CLOSED', poolAmount: '500', availableAmount: '0' });
  });
});

describe('a lapsed hold whose chain does not answer', () => {
  it('is asked about before the ad row is locked: a hung RPC stalls no other action on the ad', async () => {
    const adId = await createdAd(400n);
    await ads.withdraw(principal, adId, '100', maker.address); // signed, never sent
    clock += LATER;
    // A double of an RPC that hangs: the real reader's answer, held back until the test lets it through.
    let asked!: () => void;
    const wasAsked = new Promise<void>((resolve) => { asked = resolve; });
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => { answer = resolve; });
    const real = service.container.chainState;
    const hung: ChainStateReader = {
      ...real,
      async requestExecuted(chain, request) {
        asked();
        await answered;
        return real.requestExecuted(chain, request);
      },
    };
    const stalled = createAdsService({
      knex: service.knex, registryCache: service.container.registryCache, signers: service.container.signers,
      verifier: service.container.verifier, chainState: hung, orderChainReader: createOrderChainReader(service.container.chains),
      settings: { signedRequestTtlSeconds: TTL, confirmGraceSeconds: GRACE, maxPendingAdsPerUser: 20, maxOpenAdRequestsPerUser: 50 }, now: () => clock,
    });

    const update = stalled.update(principal, adId, { metadata: { note: 'settles the lapsed hold' } });
    try {
      await wasAsked;
      // While the chain is being asked, the ad row is free: another transaction takes its lock at once.
      const locked = await service.knex.transaction((trx) => trx.raw('select id from ads where id = ? for update nowait', [adId]));
      expect(locked.rows).toEqual([{ id: adId }]);
    } finally {
      answer();
      await update;
    }
    // The chain said the withdraw never ran: its hold went back.
    expect(await books(adId)).toMatchObject({ poolAmount: '400', availableAmount: '400' });
    expect(await service.knex('ad_requests').where({ ad_id: adId, action: 'withdrawFromAd' }).pluck('status')).toEqual(['EXPIRED']);
  });
});
