import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InterfaceAbi } from 'ethers';
import { evmContractCall } from '../../chains/evm/call-args.ts';
import {
  AD_CHAIN, eventually, explainRevert, mined, ORDER_CHAIN, signOrderHash, tradeParties, withGasHeadroom, type DevnetClient,
} from '../support/devnet-client.ts';
import { stepOf } from '../support/pushed-stream.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { openSse } from '../support/sse-client.ts';
import { startScene, type Scene } from '../support/scene.ts';
import { call, loginEvm } from '../support/wallets.ts';

/**
 * Whole trades through HTTP on the two-chain devnet with the embedded orchestrator: the Maker's ad
 * on chain 31338, the Bridger's deposit on 31337, the lock, both unlocks with a real proof, and the
 * contracts paying out; the expiry path; and concurrent creates against one ad.
 */

const { makerKey, bridgerKey, maker, bridger } = tradeParties();

let scene: Scene;
let service: TestService;
let devnet: DevnetClient;
let makerToken: string;
let bridgerToken: string;
let routeId: string;

const trade = async (id: string) => (await call(service, 'GET', `/v1/trades/${id}`)).body;
const adOf = async (id: string) => (await call(service, 'GET', `/v1/ads/${id}`)).body;

const createAd: Scene['createAd'] = (...args) => scene.createAd(...args);

beforeAll(async () => {
  // One Bridger makes every trade of this file (50 at once below): no per-wallet cap in the way here.
  scene = await startScene({ env: { METRICS_PORT: '0', METRICS_SAMPLE_SECONDS: '1', MAX_OPEN_RESERVATIONS_PER_WALLET: '1000', MAX_OPEN_RESERVATIONS_PER_AD: '1000' } });
  ({ service, devnet, makerToken, bridgerToken, routeId } = scene);
});

afterAll(async () => {
  await scene?.close();
});

describe('a whole trade with the embedded orchestrator', () => {
  it('settles on both chains: deposit, proof, lock, both unlocks, and the contracts pay out', async () => {
    const adId = await createAd(1000n);
    // Step 1: the Bridger approves the OrderPortal for the deposit (the service checks it) and creates the trade.
    await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
    const created = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
    expect(created.status).toBe(200);
    const { tradeId, reqContractDetails: order } = created.body;
    expect(order).toMatchObject({ chainId: ORDER_CHAIN, chainKind: 'EVM', contractAddress: service.devnet!.deployments[ORDER_CHAIN]!.orderPortal });
    expect(order.orderParams).toMatchObject({ amount: '100', bridger: bridger.address, orderRecipient: maker.address, adRecipient: bridger.address, adId });
    expect(await trade(tradeId)).toMatchObject({ status: 'PENDING', amount: '100', bridgerClaimed: false, adCreatorClaimed: false });
    expect(await adOf(adId)).toMatchObject({ availableAmount: '900', lockedAmount: '100' });
    expect((await call(service, 'GET', `/v1/trades/${tradeId}/params`, undefined, bridgerToken)).body).toEqual({ ...order.orderParams, orderHash: order.orderHash });

    // Nothing before its time: no lock before the deposit, no unlock before the lock.
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken)).status).toBe(409);
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/lock`, undefined, bridgerToken)).status).toBe(403);

    // Step 2-3: the Bridger deposits on the order chain and confirms; the proof starts.
    const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).body).toEqual({ tradeId, success: true, duplicate: false });
    expect((await trade(tradeId)).status).toBe('DEPOSITED');
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).body).toEqual({ tradeId, success: true, duplicate: true });
    // The deposit is not an unlock: reported through the other endpoint it is refused, nothing changes.
    const wrongKind = await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: depositTx }, bridgerToken);
    expect(wrongKind.status).toBe(422);
    expect(JSON.stringify(wrongKind.body.message)).toMatch(/not an unlock/);
    expect((await trade(tradeId)).status).toBe('DEPOSITED');

    // Step 4: the Maker locks on the ad chain.
    const lock = await call(service, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
    expect(lock.status).toBe(200);
    expect(lock.body).toMatchObject({ chainId: AD_CHAIN, orderHash: order.orderHash });
    const lockTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken)).status).toBe(200);
    expect((await trade(tradeId)).status).toBe('LOCKED');

    // Step 5: the Bridger's order-side unlock waits for the ad side; the Maker's comes once the proof is ready.
    const early = await call(service, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, order.orderHash) }, bridgerToken);
    expect(early.status).toBe(409);
    const badSig = await call(service, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, order.orderHash) }, makerToken);
    expect(badSig.status).toBe(422);
    const makerUnlock = await eventually('the proof', () => call(service, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(makerKey!.privateKey, order.orderHash) }, makerToken), (r) => r.status !== 409);
    expect(makerUnlock.status).toBe(200);
    expect(makerUnlock.body).toMatchObject({ chainId: AD_CHAIN, contractAddress: service.devnet!.deployments[AD_CHAIN]!.adManager, orderHash: order.orderHash });
    expect(makerUnlock.body.proof).toMatch(/^0x[0-9a-f]{512}$/);

    const bridgerBefore = await devnet.balanceOf(AD_CHAIN, bridger.address);
    const adUnlockTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'unlock', makerUnlock.body, makerUnlock.body);
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlockTx }, makerToken)).status).toBe(200);
    expect(await devnet.balanceOf(AD_CHAIN, bridger.address)).toBe(bridgerBefore + 100n);
    expect(await trade(tradeId)).toMatchObject({ status: 'LOCKED', bridgerClaimed: true, adCreatorClaimed: false });

    // Step 6: the Bridger's unlock on the order chain pays the Maker; the trade settles.
    const bridgerUnlock = await call(service, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, order.orderHash) }, bridgerToken);
    expect(bridgerUnlock.status).toBe(200);
    expect(bridgerUnlock.body).toMatchObject({ chainId: ORDER_CHAIN, contractAddress: order.contractAddress });
    const makerBefore = await devnet.balanceOf(ORDER_CHAIN, maker.address);
    const orderUnlockTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'unlock', bridgerUnlock.body, bridgerUnlock.body);
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, bridgerToken)).status).toBe(200);
    expect(await devnet.balanceOf(ORDER_CHAIN, maker.address)).toBe(makerBefore + 100n);
    expect(await trade(tradeId)).toMatchObject({ status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true });
    expect(await adOf(adId)).toMatchObject({ poolAmount: '1000', availableAmount: '900', lockedAmount: '0' });
    // Repeats change nothing; another trade's transaction is refused.
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, makerToken)).body).toEqual({ tradeId, success: true, duplicate: true });
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: adUnlockTx }, makerToken)).status).toBe(422);

    // The trade gauges are read every METRICS_SAMPLE_SECONDS (1 here), never at scrape time.
    const metrics = await eventually('SETTLED in the trade gauges', async () => (await fetch(`${service.metricsUrl}/metrics`)).text(), (text) => /relayer_trades\{status="SETTLED"\} [1-9]/.test(text), 10_000);
    expect(metrics).toMatch(/relayer_trade_deposit_to_proof_seconds_count [1-9]/);
  });

  it('refuses a trade against your own ad, outside the bounds, or on a route that is not the ad\'s', async () => {
    const adId = await createAd(500n, { minAmount: '10', maxAmount: '200' });
    const own = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '50', bridgerDstAddress: maker.address }, makerToken);
    expect(own.status).toBe(403);
    const big = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '201', bridgerDstAddress: bridger.address }, bridgerToken);
    expect(big.status).toBe(422);
    expect(big.body.message).toEqual([expect.stringMatching(/^amount must lie within the ad's bounds \[10, 200\]/)]);
    // Which bound by code: a client tells "raise the amount" from "lower it" without reading English.
    expect(big.body.code).toBe('AMOUNT_ABOVE_MAXIMUM');
    const small = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '9', bridgerDstAddress: bridger.address }, bridgerToken);
    expect(small.body).toMatchObject({ statusCode: 422, code: 'AMOUNT_BELOW_MINIMUM' });
    expect(own.body.code).toBe('NOT_TRADE_PARTY');
    const otherRoute = (await call(service, 'GET', `/v1/routes?adChainId=${ORDER_CHAIN}`)).body.data[0].id;
    const wrong = await call(service, 'POST', '/v1/trades/create', { adId, routeId: otherRoute, amount: '50', bridgerDstAddress: bridger.address }, bridgerToken);
    expect(wrong.body).toMatchObject({ statusCode: 422, code: 'TRADE_INPUT' });
    expect((await adOf(adId)).availableAmount).toBe('500');
  });

  it('lets exactly as many of 50 concurrent creates succeed as the ad can cover', async () => {
    const adId = await createAd(1000n);
    await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
    const answers = await Promise.all(Array.from({ length: 50 }, () =>
      call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(10);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(40);
    expect(await adOf(adId)).toMatchObject({ availableAmount: '0', lockedAmount: '1000', status: 'EXHAUSTED' });
  });
});

describe('a confirmation (issue 34: one read, one transaction, no orchestrator round trip)', () => {
  it('reads its trade row once, applies in one transaction with its follow-ups in the outbox, and the proof follows', async () => {
    const adId = await createAd(200n);
    await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
    const created = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
    const { tradeId, reqContractDetails: order } = created.body;
    const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });

    // Every statement the service's own pool runs while the confirm is answered.
    const statements: Array<{ sql: string; bindings: unknown[] }> = [];
    const listen = (query: { sql: string; bindings?: unknown[] }) => statements.push({ sql: query.sql, bindings: query.bindings ?? [] });
    const { knex } = service.container;
    knex.on('query', listen);
    try {
      expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).body).toEqual({ tradeId, success: true, duplicate: false });
    } finally {
      knex.off('query', listen);
    }
    const ofThisTrade = statements.filter((s) => /"trades"/.test(s.sql) && s.bindings.includes(tradeId));
    // Written once: the UPDATE guarded by the state read takes the row lock. Read once before it (the
    // use case's read; no second, locked read). Reads after it are the proof job's, which the
    // follow-ups started in this process meanwhile.
    const writes = ofThisTrade.filter((s) => /^update/i.test(s.sql));
    expect(writes).toHaveLength(1);
    const readsBefore = ofThisTrade.slice(0, ofThisTrade.indexOf(writes[0]!)).filter((s) => /^select/i.test(s.sql));
    expect(readsBefore.map((s) => s.sql)).toHaveLength(1);
    expect(ofThisTrade.filter((s) => /for update/i.test(s.sql))).toEqual([]);
    // The follow-ups (cancel the reservation's timer, prove, arm the lock window) in the outbox, carried out by the runner.
    const rows = await knex('trade_follow_ups').where({ trade_id: tradeId }).orderBy('seq');
    expect(rows.map((r) => r.follow_up.type)).toEqual(expect.arrayContaining(['CANCEL_TIMER', 'PROVE', 'ARM_TIMER']));
    expect(rows.every((r) => r.carried_out_at !== null)).toBe(true);
    // PROOF_READY and the proof in one transaction: never a stored proof with the state still running.
    const proved = await eventually('proof ready', () => knex('trades').where({ id: tradeId }).first('proof_state', 'proof'), (t) => t.proof_state === 'ready', 60_000);
    expect(proved.proof).not.toBeNull();
  });
});

describe('one deposit confirmed many times at once (a bot replaying the confirm, issue 34: the guarded write)', () => {
  it('applies it once: one answer not a duplicate, one chain event, one PROVE follow-up, the ad debited once', async () => {
    const adId = await createAd(300n);
    await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
    const created = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
    const { tradeId, reqContractDetails: order } = created.body;
    const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
    // Every confirm reads the PENDING row before any writes: all race for the one guarded UPDATE.
    const answers = await Promise.all(Array.from({ length: 12 }, () =>
      call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)));
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    expect(answers.filter((a) => a.body.duplicate === false)).toHaveLength(1);
    const { knex } = service.container;
    expect(Number((await knex('chain_events').where({ subject_id: tradeId }).count({ n: '*' }).first())!.n)).toBe(1);
    const proves = (await knex('trade_follow_ups').where({ trade_id: tradeId })).filter((r) => r.follow_up.type === 'PROVE');
    expect(proves).toHaveLength(1);
    expect(await adOf(adId)).toMatchObject({ availableAmount: '200', lockedAmount: '100' });
    expect((await trade(tradeId)).status).toBe('DEPOSITED');
  });
});

describe('a deposit reorganised away', () => {
  it('is not usable for a lock: the Maker gets 409 instead of signed call data', async () => {
    const adId = await createAd(100n);
    await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 40n);
    const created = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '40', bridgerDstAddress: bridger.address }, bridgerToken);
    const { tradeId, reqContractDetails: order } = created.body;
    const orderChain = devnet.provider(ORDER_CHAIN);
    const snapshot = await orderChain.send('evm_snapshot', []);
    const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);
    // A reorg: the deposit's block is replaced by empty ones.
    await orderChain.send('evm_revert', [snapshot]);
    for (let i = 0; i < 3; i++) await orderChain.send('evm_mine', []);
    const lock = await call(service, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
    expect(lock.status).toBe(409);
    expect(lock.body.message).toMatch(/no longer in the order chain's history/);
  });
});

describe('a reservation never deposited', () => {
  let short: TestService;
  beforeAll(async () => {
    // Same relayer key as the devnet's contracts trust, same chains; only the reservation TTL differs.
    short = await startTestService({
      TRADE_RESERVATION_TTL_SECONDS: '2',
      RELAYER_EVM_PRIVATE_KEY: service.container.secrets.relayerEvmPrivateKey!,
      RELAYER_STELLAR_SECRET: service.container.secrets.relayerStellarSecret!,
    });
    await short.knex('chains').insert((await service.knex('chains').select('*')).map(({ id, ...row }) => ({ id, ...row })));
    await short.knex('tokens').insert(await service.knex('tokens').select('*'));
    await short.knex('routes').insert(await service.knex('routes').select('*'));
  });
  afterAll(async () => {
    await short?.close();
  });

  it('expires when its deposit request runs out (TRADE_RESERVATION_TTL_SECONDS) with no deposit on chain, and gives the amount back to the ad', async () => {
    const makerAccess = (await loginEvm(short, maker)).body.tokens.access;
    const bridgerAccess = (await loginEvm(short, bridger)).body.tokens.access;
    const adId = await createAd(300n, {}, short, makerAccess);
    await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 120n);
    const res = await call(short, 'POST', '/v1/trades/create', { adId, routeId, amount: '120', bridgerDstAddress: bridger.address }, bridgerAccess);
    expect(res.status).toBe(200);
    expect((await call(short, 'GET', `/v1/ads/${adId}`)).body.availableAmount).toBe('180');
    // A dApp watching the trade is told of the expiry, and why, and the stream then ends by itself.
    const watching = await openSse(`${short.url}/v1/trades/${res.body.tradeId}/events`);
    await eventually('expiry', async () => (await call(short, 'GET', `/v1/trades/${res.body.tradeId}`)).body.status, (s) => s === 'EXPIRED', 40_000);
    expect((await call(short, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ availableAmount: '300', lockedAmount: '0' });
    await watching.ended;
    expect(watching.messages.map(stepOf)).toEqual(['trade.created', 'trade.expired', 'trade.status_changed:EXPIRED']);
    expect(watching.messages[1]!.data.data).toMatchObject({ status: 'EXPIRED', reason: 'reservation' });
  });
});

describe('a deposit estimated while another lands (the bench:trades createOrder revert)', () => {
  it('reverts with TransferFailed() at the bare estimate (the token call starved of gas, named by replaying it with eth_call) and goes through with the headroom a dApp should add', async () => {
    const adId = await createAd(1000n);
    const key = bridgerKey!.privateKey;
    const portal = devnet.contract(ORDER_CHAIN, 'orderPortal', key);
    const deposit = async () => {
      const created = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
      expect(created.status).toBe(200);
      const order = created.body.reqContractDetails;
      const evmCall = evmContractCall('createOrder', order, { orderParams: order.orderParams, adToken: service.devnet!.deployments[ORDER_CHAIN]!.testErc20 });
      return { fn: portal.getFunction(evmCall.functionName), args: evmCall.args, value: evmCall.value, order, tradeId: created.body.tradeId as string };
    };
    await devnet.approve(ORDER_CHAIN, key, 'orderPortal', 10n ** 6n);
    // Bring the portal's tree to a leaf index of 3 mod 4: the next index has one more trailing zero
    // bit, so inserting there writes one more subtree slot than the estimate saw.
    while ((await portal.getFunction('nextLeafIndex')()) % 4n !== 3n) {
      const filler = await deposit();
      await mined(filler.fn(...filler.args, { value: filler.value }));
    }
    const late = await deposit();
    const estimate = await late.fn.estimateGas(...late.args, { value: late.value });
    const early = await deposit();
    await mined(early.fn(...early.args, { value: early.value }));

    const failed = await late.fn(...late.args, { value: late.value, gasLimit: estimate }).then((tx: any) => tx.wait()).catch((error: any) => error.receipt?.hash as string);
    expect(failed).toMatch(/^0x[0-9a-f]{64}$/);
    const abis = ['orderPortal', 'testErc20'].map((name) => devnet.contract(ORDER_CHAIN, name as 'orderPortal', key).interface.fragments as unknown as InterfaceAbi);
    expect(await explainRevert(devnet.provider(ORDER_CHAIN), failed, abis)).toMatch(/^reverts with TransferFailed\(\) with its gas limit \d+ \(used \d+\); with no limit it succeeds/);

    // Reported to the service, the reverted transaction is refused (422 saying so) and records nothing.
    const reported = await call(service, 'POST', `/v1/trades/${late.tradeId}/confirm`, { txHash: failed }, bridgerToken);
    expect(reported.status).toBe(422);
    expect(JSON.stringify(reported.body.message)).toMatch(/reverted/);
    expect((await call(service, 'GET', `/v1/trades/${late.tradeId}`)).body.status).toBe('PENDING');

    // The same signed request is still good (a reverted transaction consumed nothing): with headroom it lands.
    await mined(late.fn(...late.args, { value: late.value, gasLimit: withGasHeadroom(estimate) }));
    expect(await portal.getFunction('orders')(late.order.orderHash)).toBe(1n);
  });
});
