import { afterAll, beforeAll, expect, it } from 'vitest';
import { RpcUnavailableError } from '../../chains/errors.ts';
import { createChains } from '../../chains/chains.ts';
import { createChainStateReader, type ChainStateReader } from '../../chains/state.ts';
import { createActivities } from '../../trades/activities.ts';
import { lockDeadline } from '../../trades/lifecycle/index.ts';
import { AD_CHAIN, eventually, ORDER_CHAIN, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import type { TestService } from '../support/service.ts';
import { describeOnEachOrchestrator, startOrchestratedService, startScene, type OrchestratedService, type Scene } from '../support/scene.ts';
import { ORDER_STATE, prepareStellarTrades, sorobanOrder, stellarAdEvmDeposit, submitStellar, type StellarTradeWorld } from '../support/stellar-trades.ts';
import { call } from '../support/wallets.ts';

/**
 * The end of a trade's lock window on each orchestrator (embedded; Temporal, where the window is a
 * workflow timer in the worker process), on the two-chain devnet and on a Stellar ad chain: the
 * timer fires at the order's lock deadline by the service's clock, and the ad chain decides. A
 * Maker's lock mined in the window's last second but reported by nobody makes the trade LOCKED (the
 * books keep the amount locked as the AdManager does); a trade with no lock stays DEPOSITED until
 * the ad chain's own time passes the deadline, then expires with its reservation back in the ad.
 *
 * Short timing: the deposit request lives 20 s (TRADE_RESERVATION_TTL_SECONDS), lockExpiry is 3660 s
 * after creation (ORDER_LOCK_EXPIRY_SECONDS), so the lock deadline (lockExpiry less the contracts'
 * hour) comes 60 s after creation. The ad chain's clock is set by block timestamps (anvil's
 * evm_setNextBlockTimestamp) to put the lock in the last second the contract accepts, and to pass
 * the deadline on chain when the test says so (anvil mines no block by itself).
 *
 * On a Stellar ad chain (the local Soroban network), the Maker's lock on the Soroban AdManager,
 * reported by nobody, is found when the window's timer fires: LOCKED, not EXPIRED, and the books'
 * locked equal the Soroban AdManager's. All four runs (two chains, two orchestrators) go side by
 * side: most of their time is the wait for the deadline.
 */

const { makerKey, bridgerKey, bridger } = tradeParties();
/** The deposit request lives 20 s, the lock deadline comes 60 s after creation. */
const SHORT_TIMING = { TRADE_RESERVATION_TTL_SECONDS: '20', ORDER_LOCK_EXPIRY_SECONDS: '3660' };

describeOnEachOrchestrator('the lock window ends on the ad chain\'s clock', (orchestrator) => {
  let scene: Scene;
  let service: TestService;
  let devnet: DevnetClient;
  let makerToken: string;
  let bridgerToken: string;
  let routeId: string;
  /** The first test's trade whose Maker never locked: EXPIRED, its deposit still in the OrderPortal. */
  let neverLocked: { tradeId: string; refundTime: number } | undefined;
  /** The first test's trade locked in the window's last second and never unlocked: LOCKED. */
  let lockedHostage: { tradeId: string; deadline: number; refundTime: number } | undefined;

  const trade = async (id: string) => (await call(service, 'GET', `/v1/trades/${id}`)).body;
  const books = async (id: string) => (await call(service, 'GET', `/v1/ads/${id}`)).body;

  beforeAll(async () => {
    // The keeper on, its grace for unlocks beyond anything these tests wait: only the refund it owes is sent here.
    scene = await startScene({ orchestrator, env: { ...SHORT_TIMING, KEEPER_ENABLED: 'true', KEEPER_POLL_SECONDS: '1', KEEPER_UNLOCK_AFTER_SECONDS: '86400' } });
    ({ service, devnet, makerToken, bridgerToken, routeId } = scene);
  }, 240_000);

  afterAll(async () => {
    await scene?.close();
  });

  /** An ad of `amount` created and confirmed; its id. */
  const confirmedAd = (amount: bigint): Promise<string> => scene.createAd(amount);

  /** A trade of `amount` on `adId`, its deposit made and confirmed: DEPOSITED. */
  async function depositedTrade(adId: string, amount: bigint) {
    await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', amount);
    const opened = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: amount.toString(), bridgerDstAddress: bridger.address }, bridgerToken);
    expect(opened.status).toBe(200);
    const { tradeId, reqContractDetails: order } = opened.body;
    const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
    expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);
    expect(await trade(tradeId)).toMatchObject({ status: 'DEPOSITED' });
    return { tradeId: tradeId as string, deadline: Number(lockDeadline(order.orderParams)), refundTime: Number(order.orderParams.refundTime) };
  }

  it('a lock mined in the last second and never reported makes the trade LOCKED, not EXPIRED; a window with no lock closes at the chain\'s deadline', async () => {
    const adChain = devnet.provider(AD_CHAIN);
    const adId = await confirmedAd(150n);
    const hostage = await depositedTrade(adId, 100n);
    const unlocked = await depositedTrade(adId, 40n);
    expect(await books(adId)).toMatchObject({ availableAmount: '10', lockedAmount: '140' });

    // The Maker locks in the last second the contract accepts (the block stamped at the lock
    // deadline) and reports nothing: a Maker who hopes the service expires the trade and hands the
    // amount to another Bridger while it stays locked on chain.
    const lock = await call(service, 'POST', `/v1/trades/${hostage.tradeId}/lock`, undefined, makerToken);
    expect(lock.status).toBe(200);
    await adChain.send('evm_setNextBlockTimestamp', [hostage.deadline]);
    const lockTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
    expect((await adChain.getBlock('latest'))!.timestamp).toBe(hostage.deadline);

    // The window's timer fires at the deadline by the service's clock: the AdManager shows the lock, so it is the trade's.
    await eventually('the lock window', async () => (await trade(hostage.tradeId)).status, (s) => s !== 'DEPOSITED', 150_000);
    expect(await trade(hostage.tradeId)).toMatchObject({ status: 'LOCKED' });
    lockedHostage = hostage;
    const [lockedEvent] = await service.knex('chain_events').where({ subject_id: hostage.tradeId, event: 'OrderLocked' }).select('tx_hash');
    expect(lockedEvent).toEqual({ tx_hash: lockTx });
    // The Maker reporting it afterwards changes nothing.
    expect((await call(service, 'POST', `/v1/trades/${hostage.tradeId}/confirm`, { txHash: lockTx }, makerToken)).body)
      .toEqual({ tradeId: hostage.tradeId, success: true, duplicate: true });

    // The other trade's deadline has passed by the service's clock, not by the ad chain's (no block
    // stamped after it yet: a lock could still be mined): it stays DEPOSITED, its reservation held.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, (unlocked.deadline + 3) * 1000 - Date.now())));
    expect(await trade(unlocked.tradeId)).toMatchObject({ status: 'DEPOSITED' });
    expect(await books(adId)).toMatchObject({ availableAmount: '10', lockedAmount: '140' });

    // The ad chain's time passes the deadline with no lock: the window is closed, the trade expires and its amount is back in the ad.
    await adChain.send('evm_setNextBlockTimestamp', [unlocked.deadline + 1]);
    await adChain.send('evm_mine', []);
    await eventually('the closed window', async () => (await trade(unlocked.tradeId)).status, (s) => s !== 'DEPOSITED', 60_000);
    expect(await trade(unlocked.tradeId)).toMatchObject({ status: 'EXPIRED' });
    neverLocked = unlocked;
    const pushed = await service.knex('pushed_events').where({ trade_id: unlocked.tradeId }).orderBy('trade_seq').select('type', 'data');
    expect(pushed.slice(-2)).toMatchObject([{ type: 'trade.expired', data: { status: 'EXPIRED' } }, { type: 'trade.status_changed', data: { status: 'EXPIRED' } }]);

    // The books follow the chain: what the AdManager holds locked is locked in the books, the rest available.
    const onChain = await createChainStateReader().ad(
      { kind: 'EVM', chainId: AD_CHAIN, rpcUrl: service.devnet!.rpcUrls[AD_CHAIN]! }, service.devnet!.deployments[AD_CHAIN]!.adManager, adId,
    );
    expect(onChain).toMatchObject({ available: 50n, locked: 100n });
    expect(await books(adId)).toMatchObject({ availableAmount: '50', lockedAmount: '100' });
    expect(await service.knex('ads').where({ id: adId }).first('locked_amount', 'reserved_amount')).toEqual({ locked_amount: '100', reserved_amount: '0' });
    expect(await service.container.runAudit()).toMatchObject({ drifts: [], repairs: [], unchecked: 0 });

    // The Maker gained nothing: the locked amount cannot be promised to another Bridger.
    await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
    const another = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
    expect(another.status).toBe(409);
    expect(await books(adId)).toMatchObject({ availableAmount: '50', lockedAmount: '100' });
  }, 300_000);

  // What the old rule left behind (a trade expired by the service's clock while its lock is on chain),
  // planted in the books: EXPIRED is terminal and no event repairs it, so the audit reports it.
  it('reports a trade EXPIRED in the books whose lock is on the AdManager as drift of its ad, and repairs nothing', async () => {
    const adChain = devnet.provider(AD_CHAIN);
    const adId = await confirmedAd(80n);
    const expired = await depositedTrade(adId, 30n);
    const lock = await call(service, 'POST', `/v1/trades/${expired.tradeId}/lock`, undefined, makerToken);
    await adChain.send('evm_setNextBlockTimestamp', [expired.deadline]);
    await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
    // The old rule: the trade expired and its reservation given back, the lock unseen.
    await service.knex.transaction(async (trx) => {
      await trx('trades').where({ id: expired.tradeId }).update({ status: 'EXPIRED' });
      await trx('ads').where({ id: adId }).decrement('reserved_amount', 30);
    });
    expect(await books(adId)).toMatchObject({ availableAmount: '80', lockedAmount: '0' });

    const report = await service.container.runAudit();
    expect(report).toMatchObject({ repairs: [], unchecked: 0 });
    expect(report.drifts).toEqual([{ kind: 'ad-balance', subject: adId, detail: expect.stringMatching(/available 50, locked 30; books: in the contract 80, locked 0/) }]);
    expect(await trade(expired.tradeId)).toMatchObject({ status: 'EXPIRED' });
  }, 300_000);

  it('expires nothing while the ad chain cannot be read: the timer fails (to be retried) and the trade stays DEPOSITED with its reservation', async () => {
    const adId = await confirmedAd(60n);
    const waiting = await depositedTrade(adId, 20n);
    // The ad chain's RPC down, as the real reader answers it (undefined: "cannot tell"; the last test shows it for a dead RPC).
    const down: ChainStateReader = { ...service.container.chainState, finalTime: async () => undefined, orderState: async () => undefined };
    const { knex, registryCache, verifier, merkleStore } = service.container;
    const activities = createActivities({
      knex, registryCache, verifier, merkleStore, chainState: down, signedRequestTtlSeconds: 600,
      // Not reached on this step (doubles named as such): the proof and the tree sync.
      prover: () => { throw new Error('no proof here'); }, chains: createChains(),
    });
    await expect(activities.applyEvent({ tradeId: waiting.tradeId, event: { type: 'LOCK_WINDOW_CLOSED' } })).rejects.toBeInstanceOf(RpcUnavailableError);
    expect(await trade(waiting.tradeId)).toMatchObject({ status: 'DEPOSITED' });
    expect(await books(adId)).toMatchObject({ availableAmount: '40', lockedAmount: '20' });
  });

  it('reads the ad chain\'s time from the newest block as deep as its confirmations, and cannot tell when the RPC is down', async () => {
    const adChain = devnet.provider(AD_CHAIN);
    const reader = createChainStateReader();
    const latest = (await adChain.getBlock('latest'))!.timestamp;
    await adChain.send('evm_setNextBlockTimestamp', [latest + 10]);
    await adChain.send('evm_mine', []);
    await adChain.send('evm_setNextBlockTimestamp', [latest + 20]);
    await adChain.send('evm_mine', []);
    const chain = { kind: 'EVM' as const, chainId: AD_CHAIN, rpcUrl: service.devnet!.rpcUrls[AD_CHAIN]! };
    expect(await reader.finalTime({ ...chain, confirmations: 1 })).toBe(BigInt(latest + 20));
    // A block one deep may still be replaced, by one stamped no earlier than its parent: the time is the parent's.
    expect(await reader.finalTime({ ...chain, confirmations: 2 })).toBe(BigInt(latest + 10));
    expect(await reader.finalTime({ ...chain, rpcUrl: 'http://127.0.0.1:9' })).toBeUndefined();
  });

  // Last: it moves the order chain's clock past refundTime for good.
  it('refunds the Bridger whose Maker never locked at refundTime, and releases a lock nobody unlocked at lockExpiry, on the chains\' clocks', async () => {
    const { tradeId, refundTime } = neverLocked!;
    const orderChain = devnet.provider(ORDER_CHAIN);
    const bridgerBefore = await devnet.balanceOf(ORDER_CHAIN, bridger.address);
    // Before refundTime the OrderPortal would refuse it: the keeper only waits.
    expect(await service.knex('keeper_sends').where({ trade_id: tradeId }).select('action', 'side', 'status')).toEqual([{ action: 'refund', side: 'order', status: 'owed' }]);
    const now = (await orderChain.getBlock('latest'))!.timestamp;
    await orderChain.send('evm_increaseTime', [Math.max(0, refundTime - now + 1)]);
    for (let i = 0; i < 4; i += 1) await orderChain.send('evm_mine', []);
    // Waited on with the keeper's own record beside the trade: a give-up says where the send stood.
    const { refunded } = await eventually('the keeper\'s refund', async () => ({
      refunded: await trade(tradeId),
      send: await service.knex('keeper_sends').where({ trade_id: tradeId }).first('status', 'last_error', 'tx_hash', 'reported_at'),
    }), (seen) => seen.refunded.transactions.some((x: { step: string }) => x.step === 'refund'), 90_000);
    expect(refunded).toMatchObject({ status: 'EXPIRED' });
    expect(refunded.transactions.find((x: { step: string }) => x.step === 'refund')).toMatchObject({ chainId: ORDER_CHAIN, sentBy: 'relayer' });
    expect(await devnet.balanceOf(ORDER_CHAIN, bridger.address)).toBe(bridgerBefore + 40n);
    expect(await service.knex('keeper_sends').where({ trade_id: tradeId }).select('status')).toEqual([{ status: 'confirmed' }]);

    // The locked trade nobody unlocked before lockExpiry (the ad side's window closed unsent): the keeper releases the
    // lock back to the ad at lockExpiry, and then refunds the Bridger's deposit (the order chain is past refundTime).
    const hostage = lockedHostage!;
    const adChain = devnet.provider(AD_CHAIN);
    const adNow = (await adChain.getBlock('latest'))!.timestamp;
    await adChain.send('evm_increaseTime', [Math.max(0, hostage.deadline + 3600 - adNow + 1)]);
    for (let i = 0; i < 4; i += 1) await adChain.send('evm_mine', []);
    const released = await eventually('the keeper\'s release and refund', async () => ({
      trade: await trade(hostage.tradeId),
      sends: await service.knex('keeper_sends').where({ trade_id: hostage.tradeId }).orderBy('id').select('action', 'side', 'status', 'last_error'),
    }), (seen) => seen.trade.transactions.some((x: { step: string }) => x.step === 'refund'), 90_000);
    expect(released.trade).toMatchObject({ status: 'EXPIRED', bridgerClaimed: false });
    const steps = Object.fromEntries(released.trade.transactions.map((x: { step: string; sentBy?: string }) => [x.step, x.sentBy]));
    expect(steps).toMatchObject({ lockRelease: 'relayer', refund: 'relayer' });
    expect(released.sends).toEqual(expect.arrayContaining([
      expect.objectContaining({ action: 'unlock', side: 'ad', status: 'expired' }),
      expect.objectContaining({ action: 'releaseLock', side: 'ad', status: 'confirmed' }),
      expect.objectContaining({ action: 'refund', side: 'order', status: 'confirmed' }),
    ]));
  }, 180_000);
});

describeOnEachOrchestrator('the lock window on a Stellar ad chain', (orchestrator) => {
  let stack: OrchestratedService;
  let world: StellarTradeWorld;

  beforeAll(async () => {
    stack = await startOrchestratedService(orchestrator, {
      DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', STELLAR_DEVNET: 'on', STELLAR_DEVNET_PORT: '0', ...SHORT_TIMING,
    });
    const { service } = stack;
    world = await prepareStellarTrades({ api: service, knex: service.knex, evm: service.devnet!, stellar: service.devnet!.stellar! });
  }, 5 * 60_000);

  afterAll(async () => {
    world?.chain.close();
    await stack?.stop();
  });

  it('takes the Maker\'s lock nobody reported when the window\'s timer fires: LOCKED, not EXPIRED, the books\' locked equal the Soroban AdManager\'s', async () => {
    const run = await stellarAdEvmDeposit(world, 10_000_000n);
    const lock = await call(world.api, 'POST', `/v1/trades/${run.tradeId}/lock`, undefined, run.makerToken);
    expect(lock.status).toBe(200);
    await submitStellar(world, world.makerStellar, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
    expect(await sorobanOrder(world, world.stellar.deployment.adManager, run.orderHash)).toEqual({ state: ORDER_STATE.locked });

    const status = async () => (await call(world.api, 'GET', `/v1/trades/${run.tradeId}`)).body.status;
    await eventually('the lock window', status, (s) => s !== 'DEPOSITED', 150_000);
    expect(await status()).toBe('LOCKED');
    expect((await call(world.api, 'GET', `/v1/ads/${run.adId}`)).body).toMatchObject({ availableAmount: '40000000', lockedAmount: '10000000' });
    expect(await stack.service.container.runAudit()).toMatchObject({ drifts: [], repairs: [], unchecked: 0 });
    // The trade's proof finished before the stack stops: an embedded prover closing mid-proof waits for it (and times out on a loaded machine).
    await eventually('the proof', () => stack.service.knex('trades').where({ id: run.tradeId }).first('proof_state'), (t) => t.proof_state === 'ready', 120_000);
  }, 300_000);
});
