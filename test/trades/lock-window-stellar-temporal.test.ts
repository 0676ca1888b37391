import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RunningService } from '../../entrypoints/service.ts';
import { call } from '../support/wallets.ts';
import {
  ORDER_STATE, sorobanOrder, stellarAdEvmDeposit, submitStellar, type StellarTradeWorld,
} from '../support/stellar-trades.ts';
import { startStellarTemporalStack, type StellarTemporalStack } from '../support/stellar-temporal-stack.ts';
import { eventually } from '../support/devnet-client.ts';

/**
 * The lock window's end with the Temporal orchestrator (a real `temporal server start-dev`, the
 * API in this process, `npm run worker` and `npm run prover` as OS processes) and a Stellar ad
 * chain (the local Soroban network): the Maker's lock on the Soroban AdManager, reported by nobody,
 * is found when the window's workflow timer fires, so the trade becomes LOCKED, not EXPIRED, and the
 * books' locked equal the Soroban AdManager's. Short timing as test/trades/lock-window.test.ts: the lock
 * deadline 60 s after creation (ORDER_LOCK_EXPIRY_SECONDS 3660, TRADE_RESERVATION_TTL_SECONDS 20).
 */

let stack: StellarTemporalStack;
let service: RunningService;
let world: StellarTradeWorld;

beforeAll(async () => {
  stack = await startStellarTemporalStack(inject('temporalCli'), { TRADE_RESERVATION_TTL_SECONDS: '20', ORDER_LOCK_EXPIRY_SECONDS: '3660' });
  ({ service, world } = stack);
}, 5 * 60_000);

afterAll(async () => {
  await stack?.stop();
});

describe('the lock window on a Stellar ad chain (Temporal orchestrator)', () => {
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
    expect(await service.container.runAudit()).toMatchObject({ drifts: [], repairs: [], unchecked: 0 });
  }, 300_000);
});
