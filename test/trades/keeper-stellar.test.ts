import { afterAll, beforeAll, expect, it } from 'vitest';
import { AD_CHAIN, eventually, ORDER_CHAIN } from '../support/devnet-client.ts';
import type { TestService } from '../support/service.ts';
import { describeOnEachOrchestrator, startOrchestratedService, type OrchestratedService } from '../support/scene.ts';
import {
  advanceLedgerTo, evmAdStellarDeposit, ORDER_STATE, prepareStellarTrades, signOrderHashStellar, sorobanOrder, STELLAR, stellarAdEvmDeposit,
  stellarLock, wxlmBalance, xlmBalance,
  type StellarTradeWorld,
} from '../support/stellar-trades.ts';
import { call } from '../support/wallets.ts';

/**
 * The keeper on both chain kinds, on each orchestrator: a Maker's XLM ad and lock on the Soroban
 * AdManager, the Bridger's WXLM deposit on anvil, and then neither party acts again. After each
 * side's grace on its own chain's clock (the Stellar ledger's, anvil's) the keeper sends the ad-side
 * unlock on Stellar (a relayer request and the proof, verified in the Soroban host: the Bridger's
 * XLM paid exactly, the fee the keeper's) and the order-side unlock on anvil (the Maker's WXLM):
 * SETTLED, both named `sentBy: relayer`, the books equal the chains.
 */

const GRACE = 600;
const AMOUNT = 5_000_000n;

describeOnEachOrchestrator('the keeper with a Stellar ad chain', (orchestrator) => {
  let stack: OrchestratedService;
  let service: TestService;
  let world: StellarTradeWorld;

  beforeAll(async () => {
    stack = await startOrchestratedService(orchestrator, {
      DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', STELLAR_DEVNET: 'on', STELLAR_DEVNET_PORT: '0',
      KEEPER_ENABLED: 'true', KEEPER_POLL_SECONDS: '1', KEEPER_UNLOCK_AFTER_SECONDS: String(GRACE), SIGNED_REQUEST_TTL_SECONDS: '86400',
      // A deposit request outlives the clocks the tests before it moved.
      TRADE_RESERVATION_TTL_SECONDS: '7200',
    });
    service = stack.service;
    world = await prepareStellarTrades({ api: service, knex: service.knex, evm: service.devnet!, stellar: service.devnet!.stellar! });
  }, 5 * 60_000);

  afterAll(async () => {
    world?.chain.close();
    await stack?.stop();
  });

  const trade = async (id: string) => (await call(service, 'GET', `/v1/trades/${id}`)).body;
  /** The keeper's row for a side once the chain showed it due (its due time on that chain's clock). */
  const dueAt = async (tradeId: string, side: 'ad' | 'order') => {
    const row = await eventually(`the ${side} side seen due`, () => service.knex('keeper_sends').where({ trade_id: tradeId, action: 'unlock', side })
      .first('due_chain_time', 'status', 'last_error'), (r) => r?.due_chain_time != null, 120_000);
    return BigInt(row.due_chain_time);
  };

  it('pays both parties when both are absent after the lock: the ad side on Soroban, the order side on anvil', async () => {
    const run = await stellarAdEvmDeposit(world, AMOUNT);
    await stellarLock(world, run);
    const bridgerBefore = await xlmBalance(world, world.bridgerStellar.publicKey());
    const makerBefore = await wxlmBalance(world, ORDER_CHAIN, world.evmParties.maker.address);

    // The ledger's clock past the ad side's grace: the keeper's account sends the Soroban unlock, the AdManager pays the Bridger.
    await advanceLedgerTo(world, (await dueAt(run.tradeId, 'ad')) + BigInt(GRACE) + 1n);
    await eventually('the Bridger paid by the keeper', () => trade(run.tradeId), (t) => t.bridgerClaimed === true, 120_000);
    expect(await xlmBalance(world, world.bridgerStellar.publicKey())).toBe(bridgerBefore + AMOUNT);
    expect(await sorobanOrder(world, world.stellar.deployment.adManager, run.orderHash)).toMatchObject({ state: ORDER_STATE.unlocked });

    // anvil's clock past the order side's grace: the keeper pays the Maker on the order chain.
    const due = await dueAt(run.tradeId, 'order');
    const provider = world.chain.provider(ORDER_CHAIN);
    const now = BigInt((await provider.getBlock('latest'))!.timestamp);
    await provider.send('evm_increaseTime', [Number(due + BigInt(GRACE) + 1n - now)]);
    for (let i = 0; i < 4; i += 1) await provider.send('evm_mine', []);
    const settled = await eventually('SETTLED by the keeper', () => trade(run.tradeId), (t) => t.status === 'SETTLED', 120_000);
    expect(await wxlmBalance(world, ORDER_CHAIN, world.evmParties.maker.address)).toBe(makerBefore + AMOUNT);
    expect(settled.transactions.filter((t: { sentBy?: string }) => t.sentBy === 'relayer')).toEqual([
      expect.objectContaining({ step: 'adUnlock', chainId: STELLAR }), expect.objectContaining({ step: 'orderUnlock', chainId: ORDER_CHAIN }),
    ]);
    expect(await service.container.runAudit()).toMatchObject({ drifts: [], unchecked: 0 });
  }, 6 * 60_000);
  it('pays the Maker on Soroban when the Bridger took the ad side on anvil and the Maker is absent; nothing sent for the Bridger\'s side', async () => {
    const { makerKey, bridgerKey } = world.evmParties;
    const run = await evmAdStellarDeposit(world, AMOUNT);
    const lock = await call(service, 'POST', `/v1/trades/${run.tradeId}/lock`, undefined, run.makerToken);
    const lockTx = await world.chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
    expect((await call(service, 'POST', `/v1/trades/${run.tradeId}/confirm`, { txHash: lockTx }, run.makerToken)).status).toBe(200);
    // The Bridger takes the ad side itself on anvil (any account may send it; the AdManager pays the Bridger's recipient).
    const signature = signOrderHashStellar(world.bridgerStellar, run.orderHash);
    const adSide = await eventually('the proof', () => call(service, 'POST', `/v1/trades/${run.tradeId}/unlock`, { signature, side: 'ad' }, run.bridgerToken),
      (r) => r.status !== 409, 120_000);
    expect(adSide.status).toBe(200);
    const adUnlockTx = await world.chain.send(AD_CHAIN, 'adManager', bridgerKey!.privateKey, 'unlock', adSide.body, adSide.body);
    expect((await call(service, 'POST', `/v1/trades/${run.tradeId}/unlock/confirm`, { txHash: adUnlockTx }, run.bridgerToken)).status).toBe(200);
    const makerBefore = await xlmBalance(world, world.makerStellar.publicKey());

    // The Maker stays away past its grace on the Stellar ledger's clock: the keeper's Stellar account sends the Soroban unlock.
    await advanceLedgerTo(world, (await dueAt(run.tradeId, 'order')) + BigInt(GRACE) + 1n);
    const settled = await eventually('SETTLED by the keeper', () => trade(run.tradeId), (t) => t.status === 'SETTLED', 120_000);
    expect(await xlmBalance(world, world.makerStellar.publicKey())).toBe(makerBefore + AMOUNT);
    expect(await sorobanOrder(world, world.stellar.deployment.orderPortal, run.orderHash)).toMatchObject({ state: ORDER_STATE.unlocked });
    const byStep = Object.fromEntries(settled.transactions.map((t: { step: string }) => [t.step, t]));
    expect(byStep.adUnlock).toMatchObject({ chainId: AD_CHAIN, sentBy: 'bridger' });
    expect(byStep.orderUnlock).toMatchObject({ chainId: STELLAR, sentBy: 'relayer' });
    expect(await service.knex('keeper_sends').where({ trade_id: run.tradeId }).orderBy('id').select('action', 'side', 'status')).toEqual(expect.arrayContaining([
      { action: 'releaseLock', side: 'ad', status: 'cancelled' }, { action: 'unlock', side: 'ad', status: 'cancelled' },
      { action: 'unlock', side: 'order', status: 'confirmed' },
    ]));
    expect(await service.container.runAudit()).toMatchObject({ drifts: [], unchecked: 0 });
  }, 6 * 60_000);
});
