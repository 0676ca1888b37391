import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tradeWorkflowId } from '../../workflows/temporal/workflows.ts';
import { evmTimeoutCall } from '../../chains/evm/call-args.ts';
import { createChainStateReader } from '../../chains/state.ts';
import { AD_CHAIN, eventually, mined, ORDER_CHAIN, signOrderHash, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import type { TestService } from '../support/service.ts';
import { describeOnEachOrchestrator, startScene, type Scene } from '../support/scene.ts';
import { call } from '../support/wallets.ts';

/**
 * A Maker's lock released on the AdManager after lockExpiry (the Bridger's ad-side unlock never
 * made), on the two-chain devnet with anvil's clock moved forward, on each orchestrator (on Temporal
 * the trades' workflows close their state and are indexed EXPIRED): the books follow the chain (the
 * audit finds the release, or the Maker reports it), the trade ends EXPIRED and the amount is the
 * Maker's to withdraw again. A release of another order proves nothing for this one, and a release
 * pays nobody twice.
 *
 * Requests are signed for a day (SIGNED_REQUEST_TTL_SECONDS): the ad chain's clock runs six hours
 * ahead of the service's once moved past lockExpiry, and the withdrawal signed afterwards must
 * still be within its deadline there.
 */

const { makerKey, bridgerKey, maker, bridger } = tradeParties();

describeOnEachOrchestrator("a Maker's lock released on chain", (orchestrator) => {
  let scene: Scene;
  let service: TestService;
  let devnet: DevnetClient;
  let makerToken: string;
  let bridgerToken: string;
  let routeId: string;

  const trade = async (id: string) => (await call(service, 'GET', `/v1/trades/${id}`)).body;
  const books = async (id: string) => (await call(service, 'GET', `/v1/ads/${id}`)).body;

  beforeAll(async () => {
    scene = await startScene({ orchestrator, env: { SIGNED_REQUEST_TTL_SECONDS: '86400' } });
    ({ service, devnet, makerToken, bridgerToken, routeId } = scene);
  }, 240_000);

  afterAll(async () => {
    await scene?.close();
  });

  /** A trade of `amount` on `adId`, deposited and locked, both confirmed: LOCKED. */
  async function lockedTrade(adId: string, amount: bigint) {
    await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', amount);
    const opened = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: amount.toString(), bridgerDstAddress: bridger.address }, bridgerToken);
    expect(opened.status).toBe(200);
    const { tradeId, reqContractDetails: order } = opened.body;
    const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);
    const lock = await call(service, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
    const lockTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken)).status).toBe(200);
    expect(await trade(tradeId)).toMatchObject({ status: 'LOCKED' });
    return { tradeId: tradeId as string, orderHash: order.orderHash as string, orderParams: lock.body.orderParams };
  }

  /** AdManager.releaseLock for the order, sent by `key` (anyone may; the contract pays the ad). */
  async function releaseLock(key: string, orderParams: any): Promise<string> {
    const { functionName, args } = evmTimeoutCall('releaseLock', orderParams);
    return mined(devnet.contract(AD_CHAIN, 'adManager', key).getFunction(functionName)(...args));
  }

  /** An ad of `amount` created and confirmed; its id. */
  async function confirmedAd(amount: bigint): Promise<string> {
    const created = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: amount.toString() }, makerToken);
    await devnet.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', amount);
    const adTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', created.body);
    expect((await call(service, 'POST', `/v1/ads/${created.body.adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);
    return created.body.adId;
  }

  describe("a Maker's lock released on chain after lockExpiry", () => {
    // One flow: every lock is made before anvil's clock moves past lockExpiry (after it, the contract refuses new locks of orders the service times by its own clock).
    it('ends the trade EXPIRED with the amount back in the books (a closed ad\'s paid to the Maker), zero drift, and the Maker withdraws the whole ad', async () => {
      const adId = await confirmedAd(1000n);
      const released = await lockedTrade(adId, 100n);
      const other = await lockedTrade(adId, 50n);
      expect(await books(adId)).toMatchObject({ availableAmount: '850', lockedAmount: '150' });

      // A second ad, closed while a trade's lock is on it: the close pays out the rest, the lock stays in the contract.
      const closedAdId = await confirmedAd(300n);
      const onClosed = await lockedTrade(closedAdId, 30n);
      const close = await call(service, 'POST', `/v1/ads/${closedAdId}/close`, { to: maker.address }, makerToken);
      expect(close.status).toBe(200);
      const closeTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'closeAd', close.body);
      expect((await call(service, 'POST', `/v1/ads/${closedAdId}/confirm`, { txHash: closeTx }, makerToken)).status).toBe(200);
      expect(await books(closedAdId)).toMatchObject({ status: 'CLOSED', availableAmount: '0', lockedAmount: '30' });
      // The ad-side unlock the Maker was handed (it pays the Bridger) but never sent before the lock expired.
      const unsentUnlock = await eventually('the proof', () =>
        call(service, 'POST', `/v1/trades/${released.tradeId}/unlock`, { signature: signOrderHash(makerKey!.privateKey, released.orderHash) }, makerToken), (r) => r.status !== 409);
      expect(unsentUnlock.status).toBe(200);

      // The ad chain's clock past lockExpiry; the Maker takes the lock back on chain and reports nothing.
      const adChain = devnet.provider(AD_CHAIN);
      const now = (await adChain.getBlock('latest'))!.timestamp;
      // Past the last of the three locks' expiries: on a loaded machine the trades are created seconds apart.
      const lockExpiry = Math.max(...[released, other, onClosed].map((t) => Number(t.orderParams.lockExpiry)));
      await adChain.send('evm_increaseTime', [lockExpiry - now + 1]);
      await adChain.send('evm_mine', []);
      const releaseTx = await releaseLock(makerKey!.privateKey, released.orderParams);

      // Another order's release proves nothing for this trade: refused, nothing moves.
      const foreign = await call(service, 'POST', `/v1/trades/${other.tradeId}/confirm`, { txHash: releaseTx }, makerToken);
      expect(foreign.status).toBe(422);
      expect(await trade(other.tradeId)).toMatchObject({ status: 'LOCKED' });
      expect(await books(adId)).toMatchObject({ availableAmount: '850', lockedAmount: '150' });

      // The lock on the closed ad released too: the contract pays it to the Maker, the ad keeping nothing.
      const makerBeforeClosedRelease = await devnet.balanceOf(AD_CHAIN, maker.address);
      const closedReleaseTx = await releaseLock(bridgerKey!.privateKey, onClosed.orderParams);
      expect(await devnet.balanceOf(AD_CHAIN, maker.address)).toBe(makerBeforeClosedRelease + 30n);

      // The audit finds each release by order hash and delivers it: repairs, not drifts.
      const report = await service.container.runAudit();
      expect(report).toMatchObject({ drifts: [], unchecked: 0 });
      expect(report.repairs).toHaveLength(2);
      expect(report.repairs).toEqual(expect.arrayContaining([
        { kind: 'trade', subject: released.tradeId, txHash: releaseTx }, { kind: 'trade', subject: onClosed.tradeId, txHash: closedReleaseTx },
      ]));
      // The closed ad's lock left it, paid to its Maker: nothing locked, everything funded paid out.
      expect(await trade(onClosed.tradeId)).toMatchObject({ status: 'EXPIRED' });
      expect(await books(closedAdId)).toMatchObject({ status: 'CLOSED', availableAmount: '0', lockedAmount: '0' });
      expect(await service.knex('ads').where({ id: closedAdId }).first('paid_out_amount')).toEqual({ paid_out_amount: '300' });
      expect(await trade(released.tradeId)).toMatchObject({ status: 'EXPIRED', bridgerClaimed: false });
      expect(await books(adId)).toMatchObject({ availableAmount: '950', lockedAmount: '50' });
      const chainState = createChainStateReader();
      const adChainRef = { kind: 'EVM' as const, chainId: AD_CHAIN, rpcUrl: service.devnet!.rpcUrls[AD_CHAIN]! };
      const adManager = service.devnet!.deployments[AD_CHAIN]!.adManager;
      expect(await chainState.ad(adChainRef, adManager, adId)).toMatchObject({ available: 950n, locked: 50n });
      expect(await chainState.ad(adChainRef, adManager, closedAdId)).toMatchObject({ available: 0n, locked: 0n, closed: true });
      // Its stream replays to the end and why, then closes (the body ends); read again from its last event it answers 204.
      const pushed = await service.knex('pushed_events').where({ trade_id: released.tradeId }).orderBy('trade_seq').select('type', 'data');
      expect(pushed.slice(-2)).toEqual([
        { type: 'trade.expired', data: expect.objectContaining({ reason: 'lock_released', status: 'EXPIRED', unlockDue: null }) },
        { type: 'trade.status_changed', data: expect.objectContaining({ previousStatus: 'LOCKED', status: 'EXPIRED' }) },
      ]);
      const stream = await (await service.request(`/v1/trades/${released.tradeId}/events`)).text();
      expect(stream).toMatch(/event: trade\.expired\n(?:.*\n)*?data: .*"reason":"lock_released"/);
      const lastId = [...stream.matchAll(/^id: (\d+)$/gm)].at(-1)![1]!;
      expect((await service.request(`/v1/trades/${released.tradeId}/events`, { headers: { 'last-event-id': lastId } })).status).toBe(204);

      // The Bridger is not paid from a released lock: the unlock it was handed reverts on chain, no new one is issued, the books pay nothing.
      const bridgerBefore = await devnet.balanceOf(AD_CHAIN, bridger.address);
      await expect(devnet.send(AD_CHAIN, 'adManager', bridgerKey!.privateKey, 'unlock', unsentUnlock.body, unsentUnlock.body)).rejects.toThrow(/revert/i);
      expect(await devnet.balanceOf(AD_CHAIN, bridger.address)).toBe(bridgerBefore);
      expect((await call(service, 'POST', `/v1/trades/${released.tradeId}/unlock`, { signature: signOrderHash(makerKey!.privateKey, released.orderHash) }, makerToken)).status).toBe(409);
      // The release reported again (the Maker's own report after the audit's): a duplicate, nothing moves twice.
      expect((await call(service, 'POST', `/v1/trades/${released.tradeId}/confirm`, { txHash: releaseTx }, makerToken)).body)
        .toEqual({ tradeId: released.tradeId, success: true, duplicate: true });
      expect(await books(adId)).toMatchObject({ availableAmount: '950', lockedAmount: '50' });
      expect(await service.knex('ads').where({ id: adId }).first('paid_out_amount')).toEqual({ paid_out_amount: '0' });

      // The Maker releases the other lock too and reports it at once through /confirm: the books follow without the audit.
      const otherRelease = await releaseLock(makerKey!.privateKey, other.orderParams);
      expect((await call(service, 'POST', `/v1/trades/${other.tradeId}/confirm`, { txHash: otherRelease }, makerToken)).body)
        .toEqual({ tradeId: other.tradeId, success: true, duplicate: false });
      expect(await trade(other.tradeId)).toMatchObject({ status: 'EXPIRED' });
      expect(await books(adId)).toMatchObject({ availableAmount: '1000', lockedAmount: '0' });
      expect(await service.container.runAudit()).toMatchObject({ drifts: [], repairs: [], unchecked: 0 });
      // Temporal only: each trade's workflow closed its state too, indexed EXPIRED under its ad (the audit's repair and the Maker's report alike).
      if (scene.temporal) {
        const indexed = await eventually('indexed EXPIRED', () => scene.temporal!.listWorkflows(`TradeStatus='EXPIRED' AND AdId='${adId}'`), (ids) => ids.length >= 2, 15_000);
        expect(new Set(indexed)).toEqual(new Set([tradeWorkflowId(released.tradeId), tradeWorkflowId(other.tradeId)]));
      }

      // The whole ad back to the Maker through the service, and the chain accepts it.
      const makerBefore = await devnet.balanceOf(AD_CHAIN, maker.address);
      const withdraw = await call(service, 'POST', `/v1/ads/${adId}/withdraw`, { poolAmountWithdraw: '1000', to: maker.address }, makerToken);
      expect(withdraw.status).toBe(200);
      const withdrawTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'withdrawFromAd', withdraw.body);
      expect((await call(service, 'POST', `/v1/ads/${adId}/confirm`, { txHash: withdrawTx }, makerToken)).status).toBe(200);
      expect(await devnet.balanceOf(AD_CHAIN, maker.address)).toBe(makerBefore + 1000n);
      expect(await books(adId)).toMatchObject({ availableAmount: '0', lockedAmount: '0' });
      expect(await chainState.ad(adChainRef, adManager, adId)).toMatchObject({ available: 0n, locked: 0n });
      expect(await service.container.runAudit()).toMatchObject({ drifts: [], repairs: [], unchecked: 0 });
    }, 300_000);
  });
});
