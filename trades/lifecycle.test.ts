import { describe, expect, it } from 'vitest';
import { TRADE_STATUSES } from '../domain/index.ts';
import { INITIAL_STATE, isTerminal, transition, unlockDue, type TradeEvent, type TradeState } from './lifecycle.ts';

const EVENTS: TradeEvent[] = [
  { type: 'DEPOSIT_CONFIRMED' }, { type: 'RESERVATION_EXPIRED' }, { type: 'LOCK_WINDOW_CLOSED' }, { type: 'PROOF_READY' },
  { type: 'LOCK_CONFIRMED' }, { type: 'UNLOCK_CONFIRMED', side: 'ad' }, { type: 'UNLOCK_CONFIRMED', side: 'order' },
];

/** Every reachable state: each status with each proof stage and claim pair. */
const STATES: TradeState[] = TRADE_STATUSES.flatMap((status) =>
  (['none', 'running', 'ready'] as const).flatMap((proof) =>
    [[false, false], [true, false], [false, true], [true, true]].map(([bridgerClaimed, adCreatorClaimed]) =>
      ({ status, proof, bridgerClaimed: bridgerClaimed!, adCreatorClaimed: adCreatorClaimed! }))));

const label = (e: TradeEvent) => (e.type === 'UNLOCK_CONFIRMED' ? `${e.type}:${e.side}` : e.type);

/** The expected outcome of every (status, event), written out as a table. */
const TABLE: Record<string, Record<string, string>> = {
  PENDING: { DEPOSIT_CONFIRMED: 'DEPOSITED+PROVE', RESERVATION_EXPIRED: 'EXPIRED+RELEASE_RESERVATION', LOCK_WINDOW_CLOSED: 'refused', LOCK_CONFIRMED: 'refused', 'UNLOCK_CONFIRMED:ad': 'refused', 'UNLOCK_CONFIRMED:order': 'refused' },
  DEPOSITED: { DEPOSIT_CONFIRMED: 'duplicate', RESERVATION_EXPIRED: 'refused', LOCK_WINDOW_CLOSED: 'EXPIRED+RELEASE_RESERVATION', LOCK_CONFIRMED: 'LOCKED+RESERVATION_TO_LOCK', 'UNLOCK_CONFIRMED:ad': 'refused', 'UNLOCK_CONFIRMED:order': 'refused' },
  LOCKED: { DEPOSIT_CONFIRMED: 'duplicate', RESERVATION_EXPIRED: 'refused', LOCK_WINDOW_CLOSED: 'refused', LOCK_CONFIRMED: 'duplicate', 'UNLOCK_CONFIRMED:ad': 'claim', 'UNLOCK_CONFIRMED:order': 'claim' },
  SETTLED: { DEPOSIT_CONFIRMED: 'duplicate', RESERVATION_EXPIRED: 'refused', LOCK_WINDOW_CLOSED: 'refused', LOCK_CONFIRMED: 'duplicate', 'UNLOCK_CONFIRMED:ad': 'claim', 'UNLOCK_CONFIRMED:order': 'claim' },
  EXPIRED: { DEPOSIT_CONFIRMED: 'refused', RESERVATION_EXPIRED: 'refused', LOCK_WINDOW_CLOSED: 'refused', LOCK_CONFIRMED: 'refused', 'UNLOCK_CONFIRMED:ad': 'refused', 'UNLOCK_CONFIRMED:order': 'refused' },
};

describe('the trade state machine', () => {
  it('answers every state x event as the table says', () => {
    for (const state of STATES) {
      for (const event of EVENTS.filter((e) => e.type !== 'PROOF_READY')) {
        const result = transition(state, event);
        const expected = TABLE[state.status]![label(event)]!;
        const where = `${JSON.stringify(state)} + ${label(event)}`;
        if (expected === 'refused') expect(result, where).toMatchObject({ ok: false, duplicate: false });
        else if (expected === 'duplicate') expect(result, where).toMatchObject({ ok: false, duplicate: true });
        else if (expected === 'claim') {
          const side = (event as { side: 'ad' | 'order' }).side;
          const already = side === 'ad' ? state.bridgerClaimed : state.adCreatorClaimed;
          if (already) { expect(result, where).toMatchObject({ ok: false, duplicate: true }); continue; }
          expect(result.ok, where).toBe(true);
          if (!result.ok) continue;
          const both = (side === 'ad' || state.bridgerClaimed) && (side === 'order' || state.adCreatorClaimed);
          expect(result.state.status, where).toBe(both ? 'SETTLED' : state.status);
          expect(result.commands, where).toEqual(side === 'ad' ? [{ type: 'PAY_OUT_LOCK' }] : []);
        } else {
          const [status, command] = expected.split('+');
          expect(result, where).toMatchObject({ ok: true, state: { status }, commands: [{ type: command }] });
        }
      }
    }
  });

  it('marks the proof ready once, only after it was asked for', () => {
    for (const state of STATES) {
      const result = transition(state, { type: 'PROOF_READY' });
      if (state.proof === 'running') expect(result).toMatchObject({ ok: true, state: { ...state, proof: 'ready' }, commands: [] });
      else expect(result).toMatchObject({ ok: false, duplicate: state.proof === 'ready' });
    }
  });

  it('walks the happy path to SETTLED, paying the lock out once', () => {
    let state = INITIAL_STATE;
    const commands: string[] = [];
    for (const event of [EVENTS[0]!, EVENTS[3]!, EVENTS[4]!, EVENTS[5]!, EVENTS[6]!]) {
      const result = transition(state, event);
      if (!result.ok) throw new Error(result.reason);
      state = result.state;
      commands.push(...result.commands.map((c) => c.type));
    }
    expect(state).toEqual({ status: 'SETTLED', proof: 'ready', bridgerClaimed: true, adCreatorClaimed: true });
    expect(commands).toEqual(['PROVE', 'RESERVATION_TO_LOCK', 'PAY_OUT_LOCK']);
    expect(isTerminal(state)).toBe(true);
  });

  it('gives the Maker the ad-side unlock first and nobody the order side before it is confirmed', () => {
    const locked: TradeState = { status: 'LOCKED', proof: 'ready', bridgerClaimed: false, adCreatorClaimed: false };
    expect(unlockDue({ ...locked, proof: 'running' }, 'maker')).toEqual({ missing: expect.stringMatching(/proof is not ready/) });
    expect(unlockDue({ ...locked, status: 'DEPOSITED' }, 'maker')).toEqual({ missing: expect.stringMatching(/needs LOCKED/) });
    expect(unlockDue(locked, 'maker')).toEqual({ side: 'ad' });
    expect(unlockDue(locked, 'bridger')).toEqual({ missing: expect.stringMatching(/^unlock order: the Maker's ad-chain unlock .* comes first/) });
    const adDone = { ...locked, bridgerClaimed: true };
    expect(unlockDue(adDone, 'bridger')).toEqual({ side: 'order' });
    expect(unlockDue(adDone, 'maker')).toEqual({ side: 'order' });
    expect(unlockDue({ ...adDone, adCreatorClaimed: true, status: 'SETTLED' }, 'bridger')).toEqual({ missing: expect.stringMatching(/settled/) });
  });
});
