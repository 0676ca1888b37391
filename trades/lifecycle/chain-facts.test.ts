import { describe, expect, it } from 'vitest';
import { TRADE_STATUSES } from '../../domain/index.ts';
import { TRADE_STEPS, tradeStepOf } from '../../domain/trade-steps.ts';
import {
  CHAIN_FACTS, MANAGER_ORDER_STATES, PORTAL_ORDER_STATES, awaitedAction, chainFactOf, eventOf, ledgerOperationsOf, lockWindowReading,
  orderStateName, recordedAction, recordedActionFits, reservationExpiryVerdict, transition, unreportedOnChain,
  type ManagerOrderState, type PortalOrderState, type TradeState,
} from './index.ts';

const STATES: TradeState[] = TRADE_STATUSES.flatMap((status) =>
  (['none', 'running', 'ready'] as const).flatMap((proof) =>
    [[false, false], [true, false], [false, true], [true, true]].map(([bridgerClaimed, adCreatorClaimed]) =>
      ({ status, proof, bridgerClaimed: bridgerClaimed!, adCreatorClaimed: adCreatorClaimed! }))));

describe('the chain facts table', () => {
  it('has one row per trade step, each naming its contract, event, named on-chain state and endpoint', () => {
    // The refund is a step of the Trade object (the keeper's, after the trade ended) but no machine event: no row.
    expect(CHAIN_FACTS.map((fact) => fact.step)).toEqual(TRADE_STEPS.filter((step) => step !== 'refund'));
    expect(CHAIN_FACTS.map((f) => [f.step, f.name, f.contract, f.event, f.orderState, f.confirmation])).toEqual([
      ['deposit', 'createOrder', 'OrderPortal', 'OrderCreated', 'Deposited', 'deposit-or-lock'],
      ['lock', 'lockForOrder', 'AdManager', 'OrderLocked', 'Locked', 'deposit-or-lock'],
      ['adUnlock', 'unlock', 'AdManager', 'OrderUnlocked', 'Unlocked', 'unlock'],
      ['orderUnlock', 'unlock', 'OrderPortal', 'OrderUnlocked', 'Unlocked', 'unlock'],
      ['lockRelease', 'releaseLock', 'AdManager', 'LockReleased', 'Released', 'deposit-or-lock'],
    ]);
    for (const fact of CHAIN_FACTS) {
      // The side is the contract's chain; the state named is one of that contract's; the step's own state shows it.
      expect(fact.side, fact.step).toBe(fact.contract === 'AdManager' ? 'ad' : 'order');
      expect((fact.contract === 'AdManager' ? MANAGER_ORDER_STATES : PORTAL_ORDER_STATES) as readonly string[], fact.step).toContain(fact.orderState);
      expect(fact.shownBy, fact.step).toContain(fact.orderState);
      // The recorded event names its step back, as the Trade object's step list does.
      expect(recordedAction(fact.event, fact.side), fact.step).toEqual({ name: fact.name, side: fact.side });
      expect(tradeStepOf(fact.event, fact.side, { adChainId: 'ad', orderChainId: 'order' }), fact.step).toBe(fact.step);
      expect(chainFactOf({ name: fact.name, side: fact.side })).toBe(fact);
      expect(eventOf(fact)).toEqual(fact.machineEvent);
      expect(recordedActionFits(fact.name, fact.confirmation), fact.step).toBe(true);
    }
    expect(recordedAction('OrderCreated', 'ad')).toBeUndefined();
    expect(recordedAction('OrderRefunded', 'order')).toBeUndefined();
  });

  it('names the numbers the contracts report, and refuses one no contract state has', () => {
    expect([0, 1, 2, 3].map((n) => orderStateName('OrderPortal', n))).toEqual(['None', 'Deposited', 'Unlocked', 'Refunded']);
    expect([0, 1, 2, 3].map((n) => orderStateName('AdManager', n))).toEqual(['None', 'Locked', 'Unlocked', 'Released']);
    expect(() => orderStateName('AdManager', 4)).toThrow(RangeError);
  });

  it('every action the confirm awaits is a row whose endpoint is the one it was reported through', () => {
    for (const state of STATES) {
      for (const kind of ['deposit-or-lock', 'unlock'] as const) {
        const awaited = awaitedAction(state, kind);
        if (awaited.ok) expect(chainFactOf(awaited.action).confirmation, `${JSON.stringify(state)} ${kind}`).toBe(kind);
      }
    }
  });

  it('reads a lock on the AdManager from its named state: any state the lock leads to', () => {
    expect(MANAGER_ORDER_STATES.map((s) => lockWindowReading(s, 5n))).toEqual([
      { readable: true, locked: false, chainTime: 5n }, { readable: true, locked: true, chainTime: 5n },
      { readable: true, locked: true, chainTime: 5n }, { readable: true, locked: true, chainTime: 5n },
    ]);
  });

  it('vetoes a reservation expiry only for a PENDING trade whose deposit the OrderPortal shows', () => {
    const pending: TradeState = { status: 'PENDING', proof: 'none', bridgerClaimed: false, adCreatorClaimed: false };
    expect(PORTAL_ORDER_STATES.map((orderState) => reservationExpiryVerdict(pending, { readable: true, orderState }).do)).toEqual(['expire', 'keep', 'keep', 'keep']);
    expect(reservationExpiryVerdict(pending, { readable: false })).toEqual({ do: 'expire' });
    for (const state of STATES.filter((s) => s.status !== 'PENDING')) {
      expect(reservationExpiryVerdict(state, { readable: true, orderState: 'Deposited' }), state.status).toEqual({ do: 'expire' });
    }
  });

  it('moves the ad ledger as the machine commands: a lock released on a closed ad leaves it as a pay-out', () => {
    const released = transition({ status: 'LOCKED', proof: 'ready', bridgerClaimed: false, adCreatorClaimed: false }, { type: 'LOCK_RELEASED' });
    if (!released.ok) throw new Error(released.reason);
    expect(ledgerOperationsOf(released.commands, 7n, false)).toEqual([{ op: 'returnLock', amount: 7n }]);
    expect(ledgerOperationsOf(released.commands, 7n, true)).toEqual([{ op: 'payOut', amount: 7n }]);
    expect(ledgerOperationsOf([{ type: 'RELEASE_RESERVATION' }, { type: 'RESERVATION_TO_LOCK' }, { type: 'PAY_OUT_LOCK' }, { type: 'PROVE' }], 3n, true))
      .toEqual([{ op: 'release', amount: 3n }, { op: 'lock', amount: 3n }, { op: 'payOut', amount: 3n }]);
  });
});

describe('what the audit reads of an open trade against its two contracts (unreportedOnChain)', () => {
  /** The audit's former hand-written rules, with the contracts' numbers, as the reference the table must reproduce. */
  function formerRules(trade: TradeState, portal: number, manager: number): string[] {
    const missing: string[] = [];
    if (trade.status === 'PENDING' && portal >= 1) missing.push('deposit');
    if (trade.status === 'DEPOSITED' && manager >= 1) missing.push('lock');
    if (trade.status === 'LOCKED' && !trade.bridgerClaimed && manager === 2) missing.push('adUnlock');
    if (trade.status === 'LOCKED' && !trade.adCreatorClaimed && portal === 2) missing.push('orderUnlock');
    if (trade.status === 'LOCKED' && !trade.bridgerClaimed && manager === 3) missing.push('lockRelease');
    if (missing.length > 0) return [`deliver ${missing[0]}`];
    const drifts: string[] = [];
    if (trade.status !== 'PENDING' && portal === 0) drifts.push('deposit-missing');
    if (trade.status === 'LOCKED' && manager === 0) drifts.push('lock-missing');
    if ((trade.status === 'DEPOSITED' || trade.status === 'LOCKED') && portal === 3) drifts.push('deposit-refunded');
    return drifts;
  }

  it('delivers the first step the chain shows and the books lack, else reports the drifts, for every open state and pair of on-chain states', () => {
    let delivered = 0;
    for (const state of STATES.filter((s) => s.status !== 'SETTLED' && s.status !== 'EXPIRED')) {
      for (const [p, portal] of PORTAL_ORDER_STATES.entries()) {
        for (const [m, manager] of MANAGER_ORDER_STATES.entries()) {
          const found = unreportedOnChain(state, { OrderPortal: portal as PortalOrderState, AdManager: manager as ManagerOrderState });
          const got = 'deliver' in found ? [`deliver ${found.deliver.step}`] : found.drifts;
          expect(got, `${JSON.stringify(state)} ${portal} ${manager}`).toEqual(formerRules(state, p, m));
          if ('deliver' in found) delivered++;
        }
      }
    }
    expect(delivered).toBeGreaterThan(20);
  });
});
