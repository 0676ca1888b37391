import { afterAll, beforeAll, expect, it } from 'vitest';
import { uuidToBytes32 } from '../../chains/address.ts';
import { AD_CHAIN, eventually, ORDER_CHAIN, signOrderHash, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import { expectSettledTradePushed } from '../support/pushed-stream.ts';
import type { TestService } from '../support/service.ts';
import { describeOnEachOrchestrator, startScene, type Scene } from '../support/scene.ts';
import { call } from '../support/wallets.ts';
import { tradeWorkflowId } from '../../workflows/temporal/workflows.ts';

/**
 * Issue 33, finding 5 ("An absent Maker holds a free option"), on the two-chain devnet with each
 * orchestrator (embedded; Temporal, with its worker and prover processes): the Maker creates the ad and locks, then never unlocks. The Bridger asks
 * for the ad-side unlock itself (`side: "ad"`, beside the spec), sends it to the AdManager (which
 * pays the Bridger's recipient whoever sends it), confirms it, then takes the order-side unlock as
 * usual: the trade settles with the Maker doing nothing after its lock, each party paid exactly,
 * and the books audit finds zero drift. The order side still waits for the ad side.
 */

const { makerKey, bridgerKey, maker, bridger } = tradeParties();

describeOnEachOrchestrator('a Maker who locks and never unlocks', (orchestrator) => {
  let scene: Scene;
  let service: TestService;
  let devnet: DevnetClient;
  let makerToken: string;
  let bridgerToken: string;
  let routeId: string;

  const trade = async (id: string) => (await call(service, 'GET', `/v1/trades/${id}`)).body;
  const books = async (id: string) => (await call(service, 'GET', `/v1/ads/${id}`)).body;

  beforeAll(async () => {
    scene = await startScene({ orchestrator });
    ({ service, devnet, makerToken, bridgerToken, routeId } = scene);
  }, 240_000);

  afterAll(async () => {
    await scene?.close();
  });

  it('cannot hold the Bridger\'s deposit: the Bridger takes the ad-side unlock itself, then the order side; SETTLED, exact payouts, zero drift', async () => {
    // The Maker's ad, and the Bridger's trade of 100 against it, deposited and locked (both confirmed).
    const ad = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '1000' }, makerToken);
    expect(ad.status).toBe(200);
    const adId: string = ad.body.adId;
    await devnet.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', 1000n);
    const adTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', ad.body);
    expect((await call(service, 'POST', `/v1/ads/${adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);
    await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
    const opened = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
    expect(opened.status).toBe(200);
    const { tradeId, reqContractDetails: order } = opened.body;
    const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);
    const lock = await call(service, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
    expect(lock.status).toBe(200);
    const lockTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken)).status).toBe(200);
    // From here on the Maker does nothing. The trade says the ad side is in turn, and that the Bridger may take it.
    expect(await trade(tradeId)).toMatchObject({ status: 'LOCKED', bridgerClaimed: false, unlockDue: 'MAKER', unlockableBy: ['MAKER', 'BRIDGER'] });

    const signature = signOrderHash(bridgerKey!.privateKey, order.orderHash);
    // POST unlock as the Bridger, with the headers (Retry-After) kept.
    const unlock = async (body: Record<string, unknown>) => {
      const response = await service.request(`/v1/trades/${tradeId}/unlock`, {
        method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${bridgerToken}` }, body: JSON.stringify(body),
      });
      return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() };
    };
    // A side that is neither: 422 naming the field, nothing handed out.
    const wrongSide = await unlock({ signature, side: 'both' });
    expect(wrongSide.status).toBe(422);
    expect(wrongSide.body).toMatchObject({ statusCode: 422, message: ['side must be ad or order'] });

    // The Bridger asks for the ad side explicitly: the AdManager's call data, once the proof is ready.
    const adSide = await eventually('the proof', () => unlock({ signature, side: 'ad' }), (r) => r.status !== 409, 120_000);
    expect(adSide.status).toBe(200);
    expect(adSide.body).toMatchObject({ chainId: AD_CHAIN, contractAddress: service.devnet!.deployments[AD_CHAIN]!.adManager, orderHash: order.orderHash });
    expect(adSide.body.orderParams).toMatchObject({ adRecipient: bridger.address, adAmount: '100' });
    // The spec's default is untouched: without a side (or with "order") the Bridger's unlock is the order side, still behind the ad side.
    for (const body of [{ signature }, { signature, side: 'order' }]) {
      const early = await unlock(body);
      expect(early.status, JSON.stringify(body)).toBe(409);
      expect(early.retryAfter).toMatch(/^\d+$/);
      expect(early.body.message).toMatch(/^trade .*: unlock order: the ad-chain unlock \(which pays the Bridger\) comes first.*"side": "ad"/);
    }

    // The Bridger sends the ad-side unlock from its own wallet: the AdManager pays the Bridger's recipient.
    const bridgerBefore = await devnet.balanceOf(AD_CHAIN, bridger.address);
    const adUnlockTx = await devnet.send(AD_CHAIN, 'adManager', bridgerKey!.privateKey, 'unlock', adSide.body, adSide.body);
    const receipt = await devnet.provider(AD_CHAIN).getTransactionReceipt(adUnlockTx);
    expect(receipt!.from).toBe(bridger.address);
    expect(await devnet.balanceOf(AD_CHAIN, bridger.address)).toBe(bridgerBefore + 100n);
    // ... and confirms it itself.
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlockTx }, bridgerToken)).body).toEqual({ tradeId, success: true, duplicate: false });
    expect(await trade(tradeId)).toMatchObject({ status: 'LOCKED', bridgerClaimed: true, adCreatorClaimed: false, unlockDue: 'BRIDGER', unlockableBy: ['BRIDGER', 'MAKER'] });
    expect(await books(adId)).toMatchObject({ poolAmount: '1000', availableAmount: '900', lockedAmount: '0' });
    // The ad side is not handed out twice.
    const again = await unlock({ signature, side: 'ad' });
    expect(again.status).toBe(409);
    expect(again.retryAfter).toBeNull();
    expect(again.body.message).toMatch(/ad-chain unlock is already confirmed/);

    // Then the order side, the Bridger's by default: the OrderPortal pays the Maker, the trade settles.
    const orderSide = await unlock({ signature });
    expect(orderSide.status).toBe(200);
    expect(orderSide.body).toMatchObject({ chainId: ORDER_CHAIN, contractAddress: order.contractAddress, nullifierHash: adSide.body.nullifierHash });
    const makerBefore = await devnet.balanceOf(ORDER_CHAIN, maker.address);
    const orderUnlockTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'unlock', orderSide.body, orderSide.body);
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, bridgerToken)).body).toEqual({ tradeId, success: true, duplicate: false });
    expect(await devnet.balanceOf(ORDER_CHAIN, maker.address)).toBe(makerBefore + 100n);
    expect(await trade(tradeId)).toMatchObject({ status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true, unlockDue: null, unlockableBy: [] });

    // The books agree with the AdManager, and the audit finds nothing to repair and no drift.
    const onChain = await devnet.contract(AD_CHAIN, 'adManager', bridgerKey!.privateKey).getFunction('ads')(uuidToBytes32(adId));
    expect({ available: onChain.available, locked: onChain.locked }).toEqual({ available: 900n, locked: 0n });
    expect(await books(adId)).toMatchObject({ poolAmount: '1000', availableAmount: '900', lockedAmount: '0' });
    expect(await service.container.runAudit()).toMatchObject({ drifts: [], repairs: [], unchecked: 0 });

    // Pushed as every whole trade is, and the ad side was announced as the Bridger's to take too.
    const stream = await expectSettledTradePushed(service.url, tradeId, { orderAmount: '100', adAmount: '100' }, [makerToken, bridgerToken]);
    const due = stream.filter((m) => m.event === 'trade.unlock_due').map((m) => m.data.data);
    expect(due).toEqual([
      expect.objectContaining({ side: 'ad', unlockDue: 'MAKER', unlockableBy: ['MAKER', 'BRIDGER'] }),
      expect.objectContaining({ side: 'order', unlockDue: 'BRIDGER', unlockableBy: ['BRIDGER', 'MAKER'] }),
    ]);
    // Temporal only: the trade's workflow ran to the end too, indexed SETTLED under its ad.
    if (scene.temporal) {
      expect(await eventually('indexed SETTLED', () => scene.temporal!.listWorkflows(`TradeStatus='SETTLED' AND AdId='${adId}'`), (ids) => ids.length > 0, 15_000))
        .toEqual([tradeWorkflowId(tradeId)]);
    }
  }, 240_000);
});
