import { afterAll, beforeAll, expect, it } from 'vitest';
import { evmTimeoutCall } from '../../chains/evm/call-args.ts';
import { AD_CHAIN, eventually, mined, ORDER_CHAIN, signOrderHash, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import type { TestService } from '../support/service.ts';
import { describeOnEachOrchestrator, startScene, type Scene } from '../support/scene.ts';
import { call } from '../support/wallets.ts';

/**
 * The relayer's keeper finishes what an absent party leaves undone, on the two-chain devnet with
 * anvil's clocks moved, on each orchestrator (on Temporal the worker process sends, the api
 * prepares): the Maker absent after the Bridger took the ad side (the keeper pays the Maker), both
 * parties absent after the proof (the keeper pays both), and a side a party sent first (the keeper
 * sends nothing for it). Every keeper transaction is verified into the trade like a party's and
 * named `sentBy: relayer`; the books equal the chains.
 */

const { makerKey, bridgerKey, maker, bridger } = tradeParties();
/** A party's grace before the keeper sends a due unlock (KEEPER_UNLOCK_AFTER_SECONDS), on the chain's clock. */
const GRACE = 600;

describeOnEachOrchestrator('the keeper, for an absent party', (orchestrator) => {
  let scene: Scene;
  let service: TestService;
  let devnet: DevnetClient;
  let makerToken: string;
  let bridgerToken: string;
  let routeId: string;
  let adId: string;

  const trade = async (id: string) => (await call(service, 'GET', `/v1/trades/${id}`)).body;
  const books = async (id: string) => (await call(service, 'GET', `/v1/ads/${id}`)).body;
  const sends = async (tradeId: string) => service.knex('keeper_sends').where({ trade_id: tradeId }).orderBy('id').select('action', 'side', 'status');

  /** Moves `chain`'s clock `seconds` ahead and mines past its finality depth, so the chain's final time has moved too. */
  async function moveClock(chain: string, seconds: number): Promise<void> {
    const provider = devnet.provider(chain);
    await provider.send('evm_increaseTime', [seconds]);
    for (let i = 0; i < 4; i += 1) await provider.send('evm_mine', []);
  }

  beforeAll(async () => {
    scene = await startScene({
      orchestrator,
      env: { KEEPER_ENABLED: 'true', KEEPER_POLL_SECONDS: '1', KEEPER_UNLOCK_AFTER_SECONDS: String(GRACE), SIGNED_REQUEST_TTL_SECONDS: '86400',
        // A deposit request outlives the clocks moved by the tests before it.
        TRADE_RESERVATION_TTL_SECONDS: '7200',
      },
    });
    ({ service, devnet, makerToken, bridgerToken, routeId } = scene);
    const ad = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '1000' }, makerToken);
    adId = ad.body.adId;
    await devnet.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', 1000n);
    const adTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', ad.body);
    expect((await call(service, 'POST', `/v1/ads/${adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);
  }, 240_000);

  afterAll(async () => {
    await scene?.close();
  });

  /** A trade of `amount`, deposited and locked (both confirmed), its proof ready: LOCKED. */
  async function provenLockedTrade(amount: bigint) {
    await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', amount);
    const opened = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: amount.toString(), bridgerDstAddress: bridger.address }, bridgerToken);
    expect(opened.status).toBe(200);
    const { tradeId, reqContractDetails: order } = opened.body;
    const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);
    const lock = await call(service, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
    const lockTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken)).status).toBe(200);
    await eventually('the proof', () => service.knex('trades').where({ id: tradeId }).first('proof_state'), (row) => row?.proof_state === 'ready', 120_000);
    return { tradeId: tradeId as string, orderHash: order.orderHash as string, orderParams: lock.body.orderParams };
  }

  // Each test moves the chains' clocks forward for good: the one that moves the order chain past refundTime runs last.
  it('pays both parties when both are absent after the proof: the ad side, then the order side, each after its grace', async () => {
    const { tradeId } = await provenLockedTrade(50n);
    const bridgerBefore = await devnet.balanceOf(AD_CHAIN, bridger.address);
    const makerBefore = await devnet.balanceOf(ORDER_CHAIN, maker.address);
    await eventually('the ad side seen due', () => service.knex('keeper_sends').where({ trade_id: tradeId, action: 'unlock', side: 'ad' }).first('due_chain_time'),
      (row) => row?.due_chain_time != null, 30_000);
    await moveClock(AD_CHAIN, GRACE + 5);
    await eventually('the Bridger paid by the keeper', () => trade(tradeId), (t) => t.bridgerClaimed === true, 90_000);
    expect(await devnet.balanceOf(AD_CHAIN, bridger.address)).toBe(bridgerBefore + 50n);
    await eventually('the order side seen due', () => service.knex('keeper_sends').where({ trade_id: tradeId, action: 'unlock', side: 'order' }).first('due_chain_time'),
      (row) => row?.due_chain_time != null, 30_000);
    await moveClock(ORDER_CHAIN, GRACE + 5);
    const settled = await eventually('SETTLED by the keeper', () => trade(tradeId), (t) => t.status === 'SETTLED', 90_000);
    expect(await devnet.balanceOf(ORDER_CHAIN, maker.address)).toBe(makerBefore + 50n);
    expect(settled.transactions.filter((t: { sentBy?: string }) => t.sentBy === 'relayer').map((t: { step: string }) => t.step).sort()).toEqual(['adUnlock', 'orderUnlock']);
    expect(await sends(tradeId)).toEqual(expect.arrayContaining([
      { action: 'unlock', side: 'ad', status: 'confirmed' }, { action: 'unlock', side: 'order', status: 'confirmed' },
      { action: 'releaseLock', side: 'ad', status: 'cancelled' },
    ]));
    expect(await books(adId)).toMatchObject({ lockedAmount: '0' });
    expect(await service.container.runAudit()).toMatchObject({ drifts: [], repairs: [], unchecked: 0 });
  }, 300_000);

  it('pays the Maker when the Bridger took the ad side and the Maker is absent, and sends nothing for the side the Bridger sent', async () => {
    const { tradeId, orderHash, orderParams } = await provenLockedTrade(100n);
    // The Bridger takes the ad side itself and confirms it: paid on the ad chain.
    const adSide = await call(service, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, orderHash), side: 'ad' }, bridgerToken);
    expect(adSide.status).toBe(200);
    const adUnlockTx = await devnet.send(AD_CHAIN, 'adManager', bridgerKey!.privateKey, 'unlock', adSide.body, adSide.body);
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlockTx }, bridgerToken)).status).toBe(200);
    // Within the grace the keeper waits for the Maker: the order side is owed, nothing is sent.
    await eventually('the order side seen due', () => service.knex('keeper_sends').where({ trade_id: tradeId, action: 'unlock', side: 'order' }).first('due_chain_time'),
      (row) => row?.due_chain_time != null, 30_000);
    expect(await trade(tradeId)).toMatchObject({ status: 'LOCKED', bridgerClaimed: true, adCreatorClaimed: false });
    const makerBefore = await devnet.balanceOf(ORDER_CHAIN, maker.address);

    // The Maker stays absent past its grace on the order chain's clock: the keeper sends the order side, the OrderPortal pays the Maker.
    await moveClock(ORDER_CHAIN, GRACE + 5);
    const settled = await eventually('SETTLED by the keeper', () => trade(tradeId), (t) => t.status === 'SETTLED', 90_000);
    expect(settled).toMatchObject({ bridgerClaimed: true, adCreatorClaimed: true });
    expect(await devnet.balanceOf(ORDER_CHAIN, maker.address)).toBe(makerBefore + 100n);
    const byStep = Object.fromEntries(settled.transactions.map((t: { step: string }) => [t.step, t]));
    expect(byStep.adUnlock).toMatchObject({ chainId: AD_CHAIN, txHash: adUnlockTx, sentBy: 'bridger' });
    expect(byStep.orderUnlock).toMatchObject({ chainId: ORDER_CHAIN, sentBy: 'relayer' });
    const keeperTx = await devnet.provider(ORDER_CHAIN).getTransaction(byStep.orderUnlock.txHash);
    expect(keeperTx!.from).not.toBe(bridger.address);
    expect(keeperTx!.from).not.toBe(maker.address);
    // The side the Bridger sent was never the keeper's to send; the release it would have owed at lockExpiry is gone with it.
    expect(await sends(tradeId)).toEqual(expect.arrayContaining([
      { action: 'releaseLock', side: 'ad', status: 'cancelled' },
      { action: 'unlock', side: 'ad', status: 'cancelled' },
      { action: 'unlock', side: 'order', status: 'confirmed' },
    ]));
    // The Bridger cannot take its deposit back as well: past refundTime the OrderPortal refuses the refund.
    const now = (await devnet.provider(ORDER_CHAIN).getBlock('latest'))!.timestamp;
    await moveClock(ORDER_CHAIN, Math.max(0, Number(orderParams.refundTime) - now + 1));
    const { functionName, args } = evmTimeoutCall('refund', orderParams);
    await expect(mined(devnet.contract(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey).getFunction(functionName)(...args))).rejects.toThrow(/revert/i);
    expect(await service.container.runAudit()).toMatchObject({ drifts: [], repairs: [], unchecked: 0 });
  }, 300_000);
});
