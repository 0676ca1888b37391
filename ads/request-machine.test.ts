import { describe, expect, it } from 'vitest';
import type { AdAction } from '../db/repositories/ad-requests.ts';
import { ZERO_BALANCES, type AdBalances } from './ledger.ts';
import {
  REQUEST_STATUSES, admitRequest, admitReservation, admitUpdate, statusesMovedBy, stepRequest,
  type AdFacts, type RequestEvent, type RequestStatus, type RequestStep,
} from './request-machine.ts';

const ACTIONS: readonly AdAction[] = ['createAd', 'fundAd', 'withdrawFromAd', 'closeAd'];
/** 100 available, 10 reserved, 5 locked, 30 withdrawing (held by requests). */
const BALANCES: AdBalances = { ...ZERO_BALANCES, pool: 145n, reserved: 10n, locked: 5n, withdrawing: 30n };
const OPEN_AD: AdFacts = { baseStatus: 'ACTIVE', balances: BALANCES };
const CLOSED_AD: AdFacts = { baseStatus: 'CLOSED', balances: { ...BALANCES, withdrawing: 0n, paidOut: 130n } };
const HELD = 30n;

/**
 * The whole table, written out by hand: (action, status, event) -> the step. Every action, every
 * status, every event: a new rule changes a row here, on purpose.
 */
function expected(action: AdAction, status: RequestStatus, event: RequestEvent, ad: AdFacts): RequestStep {
  if (event.type === 'LAPSED') {
    if (status !== 'PENDING') return { kind: 'ignored' };
    return event.ran ? { kind: 'moved', status: 'EXECUTED' } : { kind: 'moved', status: 'EXPIRED', operation: { op: 'free', amount: HELD } };
  }
  if (event.type === 'VOIDED') return status === 'PENDING' || status === 'EXECUTED' ? { kind: 'moved', status: 'EXPIRED' } : { kind: 'ignored' };
  if (status === 'CONFIRMED') return { kind: 'ignored' };
  const { amount } = event;
  switch (action) {
    case 'createAd': return { kind: 'moved', status: 'CONFIRMED', operation: { op: 'fund', amount }, setAd: 'ACTIVE' };
    case 'fundAd': return { kind: 'moved', status: 'CONFIRMED', operation: { op: 'fund', amount } };
    case 'closeAd': return { kind: 'moved', status: 'CONFIRMED', operation: { op: 'close' }, setAd: 'CLOSED', voidOthers: true };
    case 'withdrawFromAd': {
      if (ad.baseStatus === 'CLOSED') return { kind: 'moved', status: 'CONFIRMED' };
      const held = status === 'EXPIRED' ? 0n : HELD;
      const free = 100n + held;
      return amount > free ? { kind: 'refused', free } : { kind: 'moved', status: 'CONFIRMED', operation: { op: 'withdraw', amount, held } };
    }
  }
}

const EVENTS: RequestEvent[] = [
  { type: 'CONFIRMED', amount: 20n }, { type: 'CONFIRMED', amount: 100n }, { type: 'CONFIRMED', amount: 130n }, { type: 'CONFIRMED', amount: 131n },
  { type: 'LAPSED', ran: false }, { type: 'LAPSED', ran: true }, { type: 'VOIDED' },
];

describe('the ad request machine', () => {
  it('steps every request status on every chain fact as the table says, on an open and a closed ad', () => {
    let rows = 0;
    for (const action of ACTIONS) {
      for (const status of REQUEST_STATUSES) {
        for (const event of EVENTS) {
          for (const ad of [OPEN_AD, CLOSED_AD]) {
            const step = stepRequest({ action, status, held: HELD }, event, ad);
            const want = expected(action, status, event, ad);
            // Undefined fields are no fields: compare what a step says.
            expect(JSON.parse(JSON.stringify(step, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))), `${action} ${status} ${JSON.stringify(event, (_k, v) => String(v))} on ${ad.baseStatus}`)
              .toEqual(JSON.parse(JSON.stringify(want, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))));
            rows++;
          }
        }
      }
    }
    expect(rows).toBe(ACTIONS.length * REQUEST_STATUSES.length * EVENTS.length * 2);
  });

  it('gives back nothing for a lapsed request that held nothing (a create, a fund)', () => {
    expect(stepRequest({ action: 'fundAd', status: 'PENDING', held: 0n }, { type: 'LAPSED', ran: false })).toEqual({ kind: 'moved', status: 'EXPIRED', operation: undefined });
  });

  it('confirms a late withdraw whose hold went back against what is free now: its own hold is not counted twice', () => {
    // EXPIRED: the 30 went back to available, so 100 + 0 is free; a PENDING one still holds its 30.
    expect(stepRequest({ action: 'withdrawFromAd', status: 'EXPIRED', held: 30n }, { type: 'CONFIRMED', amount: 101n }, OPEN_AD)).toEqual({ kind: 'refused', free: 100n });
    expect(stepRequest({ action: 'withdrawFromAd', status: 'PENDING', held: 30n }, { type: 'CONFIRMED', amount: 101n }, OPEN_AD).kind).toBe('moved');
  });

  it('derives from the table which statuses a lapse and a void select', () => {
    expect(statusesMovedBy({ type: 'LAPSED', ran: false })).toEqual(['PENDING']);
    expect(statusesMovedBy({ type: 'LAPSED', ran: true })).toEqual(['PENDING']);
    expect(statusesMovedBy({ type: 'VOIDED' })).toEqual(['PENDING', 'EXECUTED']);
  });
});

describe('what a Maker may ask of an ad', () => {
  const ad = (baseStatus: AdFacts['baseStatus'], balances = BALANCES) => ({ id: 'ad-1', baseStatus, balances });

  it('refuses every request on a PENDING or CLOSED ad, and an update too', () => {
    for (const baseStatus of ['PENDING', 'CLOSED'] as const) {
      for (const ask of [{ action: 'fundAd', closeUnderWay: false }, { action: 'withdrawFromAd', amount: 1n }, { action: 'closeAd' }] as const) {
        expect(admitRequest(ad(baseStatus), ask)).toMatchObject({ ok: false, refusal: 'STATE' });
      }
      expect(admitUpdate(ad(baseStatus))).toMatchObject({ ok: false, refusal: 'STATE', message: `ad ad-1 is ${baseStatus} and cannot be updated` });
    }
    expect(admitRequest(ad('PENDING'), { action: 'closeAd' })).toMatchObject({ message: 'ad ad-1 is not on chain yet: confirm its create transaction first' });
  });

  it('admits a fund unless a close is under way', () => {
    expect(admitRequest(ad('ACTIVE'), { action: 'fundAd', closeUnderWay: false })).toEqual({ ok: true });
    expect(admitRequest(ad('PAUSED'), { action: 'fundAd', closeUnderWay: true })).toEqual({ ok: false, refusal: 'STATE', message: 'ad ad-1 has a close under way' });
  });

  it('admits a withdraw of at most the available balance, holding it', () => {
    expect(admitRequest(ad('ACTIVE'), { action: 'withdrawFromAd', amount: 100n })).toEqual({ ok: true, hold: 100n });
    expect(admitRequest(ad('PAUSED'), { action: 'withdrawFromAd', amount: 101n })).toMatchObject({ ok: false, refusal: 'LIQUIDITY' });
  });

  it('admits a close only with no reservation open, holding the whole available balance', () => {
    expect(admitRequest(ad('ACTIVE'), { action: 'closeAd' })).toMatchObject({ ok: false, refusal: 'STATE' });
    expect(admitRequest(ad('ACTIVE', { ...BALANCES, pool: 135n, reserved: 0n }), { action: 'closeAd' })).toEqual({ ok: true, hold: 100n });
  });

  it('lets a trade reserve only on an ACTIVE ad with no close under way and enough available', () => {
    const active = { ...ad('ACTIVE'), status: 'ACTIVE' };
    expect(admitReservation(active, 100n, false, '100')).toEqual({ ok: true, hold: 100n });
    expect(admitReservation(active, 101n, false, '101 (101 units)')).toEqual({ ok: false, refusal: 'LIQUIDITY', message: 'ad ad-1 cannot cover 101 (101 units): 100 available' });
    expect(admitReservation(active, 1n, true, '1')).toEqual({ ok: false, refusal: 'STATE', message: 'ad ad-1 is closing: it takes no trades' });
    expect(admitReservation({ ...ad('PAUSED'), status: 'PAUSED' }, 1n, false, '1')).toEqual({ ok: false, refusal: 'STATE', message: 'ad ad-1 is PAUSED: it takes no trades' });
  });
});
