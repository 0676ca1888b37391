import { describe, expect, it } from 'vitest';
import { askableUnlock, INITIAL_STATE, transition, type TradeEvent, type TradeState } from './index.ts';
import { tradeEventsOf } from './pushed-events.ts';

const trade = { tradeId: 't', adId: 'a' };

/** Runs events through the machine and returns every published event type, in order. */
function publishedTypes(events: TradeEvent[]): string[][] {
  let state: TradeState = INITIAL_STATE;
  return events.map((event) => {
    const result = transition(state, event);
    if (!result.ok) throw new Error(result.reason);
    const published = tradeEventsOf(trade, state, result.state, event);
    state = result.state;
    return published.map((e) => (e.type === 'trade.claimed' ? `claimed:${e.data.side}` : e.type === 'trade.unlock_due' ? `due:${e.data.side}:${e.data.unlockDue}:${e.data.unlockableBy.join('+')}` : e.type));
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
      ['trade.status_changed', 'due:ad:MAKER:MAKER+BRIDGER'],
      ['claimed:ad', 'due:order:BRIDGER:BRIDGER+MAKER'],
      ['claimed:order', 'trade.status_changed'],
    ]);
  });

  it('ends a trade with its status change into the terminal state: every claim and the reason of an expiry come before it', () => {
    const settling = publishedTypes([
      { type: 'DEPOSIT_CONFIRMED' }, { type: 'PROOF_READY' }, { type: 'LOCK_CONFIRMED' },
      { type: 'UNLOCK_CONFIRMED', side: 'ad' }, { type: 'UNLOCK_CONFIRMED', side: 'order' },
    ]).flat();
    // The status change to SETTLED is the last event: a client that stops there has seen both claims.
    expect(settling.at(-1)).toBe('trade.status_changed');
    expect(settling.filter((type) => type.startsWith('claimed:'))).toEqual(['claimed:ad', 'claimed:order']);
    const locked: TradeState = { ...INITIAL_STATE, status: 'LOCKED', proof: 'ready', bridgerClaimed: true };
    const settled = tradeEventsOf(trade, locked, { ...locked, status: 'SETTLED', adCreatorClaimed: true }, { type: 'UNLOCK_CONFIRMED', side: 'order' });
    expect(settled.map((e) => [e.type, e.data.status])).toEqual([['trade.claimed', 'SETTLED'], ['trade.status_changed', 'SETTLED']]);
    const expired = tradeEventsOf(trade, locked, { ...locked, status: 'EXPIRED' }, { type: 'LOCK_RELEASED' });
    expect(expired.map((e) => e.type)).toEqual(['trade.expired', 'trade.status_changed']);
  });

  it('announces the unlock as due when the proof finishes after the lock', () => {
    expect(publishedTypes([{ type: 'DEPOSIT_CONFIRMED' }, { type: 'LOCK_CONFIRMED' }, { type: 'PROOF_READY' }]))
      .toEqual([['trade.status_changed'], ['trade.status_changed'], ['trade.proof_ready', 'due:ad:MAKER:MAKER+BRIDGER']]);
  });

  it('says why a trade expired', () => {
    const before: TradeState = { ...INITIAL_STATE, status: 'DEPOSITED', proof: 'running' };
    const after: TradeState = { ...before, status: 'EXPIRED' };
    const events = tradeEventsOf(trade, before, after, { type: 'LOCK_WINDOW_CLOSED' });
    expect(events.map((e) => e.type)).toEqual(['trade.expired', 'trade.status_changed']);
    expect(events[0]!.data).toMatchObject({ reason: 'lock_window', status: 'EXPIRED', unlockDue: null });
    expect(tradeEventsOf(trade, INITIAL_STATE, { ...INITIAL_STATE, status: 'EXPIRED' }, { type: 'RESERVATION_EXPIRED' })[0]!.data)
      .toMatchObject({ reason: 'reservation' });
    // A released lock: LOCKED to EXPIRED, nothing due any more.
    const locked: TradeState = { ...INITIAL_STATE, status: 'LOCKED', proof: 'ready' };
    const released = tradeEventsOf(trade, locked, { ...locked, status: 'EXPIRED' }, { type: 'LOCK_RELEASED' });
    expect(released.map((e) => e.type)).toEqual(['trade.expired', 'trade.status_changed']);
    expect(released[0]!.data).toMatchObject({ reason: 'lock_released', status: 'EXPIRED', unlockDue: null });
    expect(released[1]!.data).toMatchObject({ previousStatus: 'LOCKED', status: 'EXPIRED' });
  });

  it('publishes nothing for a proof that finishes on an expired trade', () => {
    const before: TradeState = { ...INITIAL_STATE, status: 'EXPIRED', proof: 'running' };
    expect(tradeEventsOf(trade, before, { ...before, proof: 'ready' }, { type: 'PROOF_READY' })).toEqual([]);
  });

  it('offers an unlock only from LOCKED with a proof, the ad side first, and says whose it is as GET /v1/trades/:id does', () => {
    expect(askableUnlock({ ...INITIAL_STATE, status: 'DEPOSITED', proof: 'ready' })).toBeNull();
    expect(askableUnlock({ ...INITIAL_STATE, status: 'LOCKED', proof: 'running' })).toBeNull();
    expect(askableUnlock({ ...INITIAL_STATE, status: 'LOCKED', proof: 'ready' })).toBe('ad');
    expect(askableUnlock({ ...INITIAL_STATE, status: 'LOCKED', proof: 'ready', bridgerClaimed: true })).toBe('order');
    const locked: TradeState = { ...INITIAL_STATE, status: 'LOCKED', proof: 'running' };
    expect(tradeEventsOf(trade, { ...locked, status: 'DEPOSITED' }, locked, { type: 'LOCK_CONFIRMED' })[0]!.data).toMatchObject({ unlockDue: 'MAKER' });
  });
});
