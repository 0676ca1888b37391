import { describe, expect, it } from 'vitest';
import { TRADE_STATUSES, type UnlockParty } from '../../domain/index.ts';
import {
  askableUnlock, awaitedAction, unlockableBy, unlockDue, unlockInTurn, unlockWindowEnd, whoseUnlockIsDue,
  type Role, type TradeState, type UnlockSide,
} from './index.ts';

/** Every state: each status with each proof stage and claim pair. */
const STATES: TradeState[] = TRADE_STATUSES.flatMap((status) =>
  (['none', 'running', 'ready'] as const).flatMap((proof) =>
    [[false, false], [true, false], [false, true], [true, true]].map(([bridgerClaimed, adCreatorClaimed]) =>
      ({ status, proof, bridgerClaimed: bridgerClaimed!, adCreatorClaimed: adCreatorClaimed! }))));

/**
 * The unlock order pinned as a table (docs/design.md "No party is left without a way out"): for a LOCKED trade with its
 * claims (bridgerClaimed = ad side confirmed, adCreatorClaimed = order side confirmed), the side in
 * turn, its default party, and with the proof ready who may ask and what the confirm awaits. Any
 * other status has no side in turn, whoever asks.
 */
const LOCKED_TABLE: { claims: [boolean, boolean]; inTurn: UnlockSide | null; due: UnlockParty | null; askers: UnlockParty[] }[] = [
  { claims: [false, false], inTurn: 'ad', due: 'MAKER', askers: ['MAKER', 'BRIDGER'] },
  // The order side confirmed first (a late report, another route): the ad side is still in turn.
  { claims: [false, true], inTurn: 'ad', due: 'MAKER', askers: ['MAKER', 'BRIDGER'] },
  { claims: [true, false], inTurn: 'order', due: 'BRIDGER', askers: ['BRIDGER', 'MAKER'] },
  { claims: [true, true], inTurn: null, due: null, askers: [] },
];

/** What POST unlock gives (`side`) or refuses (`409`: awaited, with Retry-After; `422`: not in this state) for a role asking `asked`, LOCKED, proof ready. */
const ASK_TABLE: { claims: [boolean, boolean]; role: Role; asked?: UnlockSide; gives: UnlockSide | '409' | '422' }[] = [
  { claims: [false, false], role: 'maker', gives: 'ad' },
  { claims: [false, false], role: 'maker', asked: 'ad', gives: 'ad' },
  { claims: [false, false], role: 'maker', asked: 'order', gives: '409' },
  { claims: [false, false], role: 'bridger', gives: '409' },
  { claims: [false, false], role: 'bridger', asked: 'ad', gives: 'ad' },
  { claims: [false, false], role: 'bridger', asked: 'order', gives: '409' },
  { claims: [true, false], role: 'maker', gives: 'order' },
  { claims: [true, false], role: 'maker', asked: 'ad', gives: '422' },
  { claims: [true, false], role: 'maker', asked: 'order', gives: 'order' },
  { claims: [true, false], role: 'bridger', gives: 'order' },
  { claims: [true, false], role: 'bridger', asked: 'ad', gives: '422' },
  { claims: [true, false], role: 'bridger', asked: 'order', gives: 'order' },
  { claims: [true, true], role: 'maker', gives: '422' },
  { claims: [true, true], role: 'bridger', asked: 'order', gives: '422' },
];

const outcome = (due: ReturnType<typeof unlockDue>): UnlockSide | '409' | '422' => ('side' in due ? due.side : due.awaited ? '409' : '422');

describe('the unlock order: one rule, every view derived from it', () => {
  it.each(LOCKED_TABLE)('LOCKED with claims $claims: $inTurn in turn, due to $due, askable by $askers, awaited by the confirm', ({ claims, inTurn, due, askers }) => {
    const [bridgerClaimed, adCreatorClaimed] = claims;
    const state: TradeState = { status: 'LOCKED', proof: 'ready', bridgerClaimed, adCreatorClaimed };
    expect(unlockInTurn(state)).toBe(inTurn);
    expect(whoseUnlockIsDue(state)).toBe(due);
    expect(askableUnlock(state)).toBe(inTurn);
    expect(unlockableBy(state)).toEqual(askers);
    const awaited = awaitedAction(state, 'unlock');
    expect(awaited.ok ? awaited.action.side : null).toBe(inTurn);
    // Under way, the proof hands out nothing yet, yet the side in turn and its party are shown.
    const proving = { ...state, proof: 'running' as const };
    expect([askableUnlock(proving), unlockableBy(proving), whoseUnlockIsDue(proving)]).toEqual([null, [], due]);
  });

  it.each(ASK_TABLE)('POST unlock by the $role asking $asked with claims $claims: $gives', ({ claims, role, asked, gives }) => {
    const [bridgerClaimed, adCreatorClaimed] = claims;
    const status = bridgerClaimed && adCreatorClaimed ? 'SETTLED' : 'LOCKED';
    expect(outcome(unlockDue({ status, proof: 'ready', bridgerClaimed, adCreatorClaimed }, role, asked))).toBe(gives);
  });

  it('hands out a side only when it is in turn, only to a party the views name, and nothing outside LOCKED: every state, role and ask', () => {
    for (const state of STATES) {
      const where = JSON.stringify(state);
      if (state.status !== 'LOCKED') expect([unlockInTurn(state), whoseUnlockIsDue(state), askableUnlock(state), unlockableBy(state)], where).toEqual([null, null, null, []]);
      for (const role of ['maker', 'bridger'] as const) {
        for (const asked of [undefined, 'ad', 'order'] as const) {
          const due = unlockDue(state, role, asked);
          if (!('side' in due)) continue;
          expect(due.side, `${where} ${role} ${asked}`).toBe(askableUnlock(state));
          expect(unlockableBy(state), `${where} ${role} ${asked}`).toContain(role === 'maker' ? 'MAKER' : 'BRIDGER');
        }
      }
      // Whoever the views say may ask is given the side in turn when asking for it.
      const side = askableUnlock(state);
      for (const party of unlockableBy(state)) expect(unlockDue(state, party === 'MAKER' ? 'maker' : 'bridger', side!), where).toEqual({ side });
    }
  });

  it('closes each side when its contract stops taking it: the ad side at lockExpiry, the order side at refundTime', () => {
    const times = { lockExpiry: '1000', refundTime: '2000' };
    expect(unlockWindowEnd('ad', times)).toBe('1000');
    expect(unlockWindowEnd('order', times)).toBe('2000');
  });
});
