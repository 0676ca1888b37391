import { describe, expect, it } from 'vitest';
import { INITIAL_STATE, transition, type TradeEvent, type TradeState } from './lifecycle.ts';
import { tradeEventsOf, unlockDueOf } from './pushed-events.ts';

const trade = { tradeId: 't', adId: 'a' };

/** Runs events through the machine and returns every published event type, in order. */
function publishedTypes(events: TradeEvent[]): string[][] {
  let state: TradeState = INITIAL_STATE;
  return events.map((event) => {
    const result = transition(state, event);
    if (!result.ok) throw new Error(result.reason);
    const published = tradeEventsOf(trade, state, result.state, event);
    state = result.state;
    return published.map((e) => (e.type === 'trade.claimed' ? `claimed:${e.data.side}` : e.type === 'trade.unlock_due' ? `due:${e.data.unlockDue.side}` : e.type));
  });
}

describe('events a trade publishes', () => {
  it('announces each step of a settled trade, with the ad-side unlock due before the order side', () => {
    expect(publishedTypes([
      { type: 'DEPOSIT_CONFIRMED' }, { type: 'PROOF_READY' }, { type: 'LOCK_CONFIRMED' },
      { type: 'UNLOCK_CONFIRMED', side: 'ad' }, { type: 'UNLOCK_CONFIRMED', side: 'order' },
    ])).toEqual([
      ['trade.status_changed'],
      ['trade.proof_ready'],
      ['trade.status_changed', 'due:ad'],
      ['claimed:ad', 'due:order'],
      ['trade.status_changed', 'claimed:order'],
    ]);
  });

  it('announces the unlock as due when the proof finishes after the lock', () => {
    expect(publishedTypes([{ type: 'DEPOSIT_CONFIRMED' }, { type: 'LOCK_CONFIRMED' }, { type: 'PROOF_READY' }]))
      .toEqual([['trade.status_changed'], ['trade.status_changed'], ['trade.proof_ready', 'due:ad']]);
  });

  it('says why a trade expired', () => {
    const before: TradeState = { ...INITIAL_STATE, status: 'DEPOSITED', proof: 'running' };
    const after: TradeState = { ...before, status: 'EXPIRED' };
    const events = tradeEventsOf(trade, before, after, { type: 'LOCK_WINDOW_CLOSED' });
    expect(events.map((e) => e.type)).toEqual(['trade.status_changed', 'trade.expired']);
    expect(events[1]!.data).toMatchObject({ reason: 'lock_window', status: 'EXPIRED', unlockDue: null });
    expect(tradeEventsOf(trade, INITIAL_STATE, { ...INITIAL_STATE, status: 'EXPIRED' }, { type: 'RESERVATION_EXPIRED' })[1]!.data)
      .toMatchObject({ reason: 'reservation' });
  });

  it('publishes nothing for a proof that finishes on an expired trade', () => {
    const before: TradeState = { ...INITIAL_STATE, status: 'EXPIRED', proof: 'running' };
    expect(tradeEventsOf(trade, before, { ...before, proof: 'ready' }, { type: 'PROOF_READY' })).toEqual([]);
  });

  it('names whose unlock is due only from LOCKED with a proof', () => {
    expect(unlockDueOf({ ...INITIAL_STATE, status: 'DEPOSITED', proof: 'ready' })).toBeNull();
    expect(unlockDueOf({ ...INITIAL_STATE, status: 'LOCKED', proof: 'running' })).toBeNull();
    expect(unlockDueOf({ ...INITIAL_STATE, status: 'LOCKED', proof: 'ready' })).toEqual({ side: 'ad', parties: ['maker'] });
    expect(unlockDueOf({ ...INITIAL_STATE, status: 'LOCKED', proof: 'ready', bridgerClaimed: true })).toEqual({ side: 'order', parties: ['bridger', 'maker'] });
  });
});
