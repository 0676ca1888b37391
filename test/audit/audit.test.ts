import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AD_CHAIN, eventually, ORDER_CHAIN, signOrderHash, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { startScene, type Scene } from '../support/scene.ts';
import { call } from '../support/wallets.ts';

/**
 * The books audit (audit/) on the two-chain devnet with whole trades: steps the chain shows but
 * nobody reported are found and applied, the books then agree with the contracts (zero drift),
 * and a drift planted in the books is reported and counted on the metric.
 */

const { makerKey, bridgerKey, maker, bridger } = tradeParties();

let scene: Scene;
let service: TestService;
let devnet: DevnetClient;
let makerToken: string;
let bridgerToken: string;
let routeId: string;

const trade = async (id: string) => (await call(service, 'GET', `/v1/trades/${id}`)).body;
const books = async (id: string) => (await call(service, 'GET', `/v1/ads/${id}`)).body;
const audit = () => service.container.runAudit();
const metrics = async () => service.container.metrics.metrics();

beforeAll(async () => {
  // The cron job is off (the test service's default): the test runs the audit itself.
  scene = await startScene();
  ({ service, devnet, makerToken, bridgerToken, routeId } = scene);
});

afterAll(async () => {
  await scene?.close();
});

describe('the books audit', () => {
  it('applies what the chain shows and nobody reported, and then finds zero drift', async () => {
    const created = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '1000' }, makerToken);
    await devnet.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', 1000n);
    const adTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', created.body);
    expect((await call(service, 'POST', `/v1/ads/${created.body.adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);
    const adId: string = created.body.adId;

    // A fund sent and never confirmed.
    const fund = await call(service, 'POST', `/v1/ads/${adId}/fund`, { poolAmountTopUp: '25' }, makerToken);
    await devnet.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', 25n);
    await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'fundAd', fund.body, {});

    // A trade whose deposit is confirmed but whose lock and ad-side unlock never are.
    await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
    const opened = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
    expect(opened.status).toBe(200);
    const { tradeId, reqContractDetails: order } = opened.body;
    const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);
    const lock = await call(service, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
    await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });

    const first = await audit();

    expect(first.drifts).toEqual([]);
    expect(first.repairs.map((r) => r.kind).sort()).toEqual(['ad-request', 'trade']);
    expect(await books(adId)).toMatchObject({ poolAmount: '1025', availableAmount: '925', lockedAmount: '100' });
    expect(await trade(tradeId)).toMatchObject({ status: 'LOCKED' });

    // The Maker's unlock goes through on chain but is never confirmed: the audit confirms it.
    const unlock = await eventually('the proof', () =>
      call(service, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(makerKey!.privateKey, order.orderHash) }, makerToken), (r) => r.status !== 409);
    await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'unlock', unlock.body, unlock.body);
    const second = await audit();
    expect(second.drifts).toEqual([]);
    expect(second.repairs).toEqual([{ kind: 'trade', subject: tradeId, txHash: expect.any(String) }]);
    expect(await trade(tradeId)).toMatchObject({ status: 'LOCKED', bridgerClaimed: true });

    // The Bridger finishes the trade as usual; the books and the chains agree, and nothing is left to repair.
    const orderSide = await call(service, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, order.orderHash) }, bridgerToken);
    const orderTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'unlock', orderSide.body, orderSide.body);
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderTx }, bridgerToken)).status).toBe(200);
    expect(await trade(tradeId)).toMatchObject({ status: 'SETTLED' });
    const settled = await audit();
    expect(settled).toMatchObject({ drifts: [], repairs: [], unchecked: 0 });
    expect(settled.ads).toBeGreaterThanOrEqual(1);
    expect(await metrics()).toMatch(/relayer_audit_drift\{kind="ad-balance"\} 0/);
    expect(await metrics()).toMatch(/relayer_audit_repairs_total\{kind="trade"\} 2/);
  }, 240_000);

  it('reports a drift planted in the books and counts it on the metric', async () => {
    const created = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '300' }, makerToken);
    await devnet.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', 300n);
    const adTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', created.body);
    expect((await call(service, 'POST', `/v1/ads/${created.body.adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);
    expect((await audit()).drifts).toEqual([]);

    // Books claiming 7 more than the AdManager holds: nothing on chain explains it.
    await service.knex('ads').where({ id: created.body.adId }).increment('pool_amount', 7);
    const report = await audit();
    expect(report.drifts).toEqual([{ kind: 'ad-balance', subject: created.body.adId, detail: expect.stringMatching(/available 300, locked 0; books: in the contract 307/) }]);
    expect(report.repairs).toEqual([]);
    expect(await metrics()).toMatch(/relayer_audit_drift\{kind="ad-balance"\} 1/);
  });
});

describe('the books audit job', () => {
  it('runs on its pg-boss schedule (and once at start) and reports on the metrics', async () => {
    const scheduled = await startTestService({ BOOKS_AUDIT_CRON: '0 3 * * *' });
    try {
      const lastRun = await eventually('the first audit run', async () =>
        /relayer_audit_last_run_timestamp_seconds (\d+)/.exec(await scheduled.container.metrics.metrics())?.[1] ?? '0', (v) => Number(v) > 0);
      expect(Number(lastRun)).toBeGreaterThan(0);
      expect(await scheduled.knex.withSchema('pgboss').table('schedule').where({ name: 'books-audit' }).first('cron')).toEqual({ cron: '0 3 * * *' });
    } finally {
      await scheduled.close();
    }
  });
});
