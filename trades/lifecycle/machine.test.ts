import { describe, expect, it } from 'vitest';
import { TRADE_STATUSES } from '../../domain/index.ts';
import {
  INITIAL_STATE, LOCK_WINDOW_RECHECK_MAX_SECONDS, LOCK_WINDOW_RECHECK_MIN_SECONDS, awaitedAction, endOf, eventOf, followUpsAfter, followUpsOf, isTerminal, lockDue, lockEventMissing, lookAgain,
  lockWindowVerdict, recordedActionFits, resume, start, transition, askableUnlock, unlockableBy, unlockDue, unlockInTurn, whoseUnlockIsDue,
  keeperStillOwes, keeperVerdict, keeperWindow, KEEPER_SEND_MARGIN_SECONDS, KEEPER_URGENT_BEFORE_SECONDS,
  type KeeperDuty, type TradeAction, type TradeCommand, type TradeEvent, type TradeState, type Transition,
} from './index.ts';

const EVENTS: TradeEvent[] = [
  { type: 'DEPOSIT_CONFIRMED' }, { type: 'RESERVATION_EXPIRED' }, { type: 'LOCK_WINDOW_CLOSED' }, { type: 'PROOF_READY' },
  { type: 'LOCK_CONFIRMED' }, { type: 'UNLOCK_CONFIRMED', side: 'ad' }, { type: 'UNLOCK_CONFIRMED', side: 'order' },
  { type: 'LOCK_RELEASED' },
];

/** Every reachable state: each status with each proof stage and claim pair. */
const STATES: TradeState[] = TRADE_STATUSES.flatMap((status) =>
  (['none', 'running', 'ready'] as const).flatMap((proof) =>
    [[false, false], [true, false], [false, true], [true, true]].map(([bridgerClaimed, adCreatorClaimed]) =>
      ({ status, proof, bridgerClaimed: bridgerClaimed!, adCreatorClaimed: adCreatorClaimed! }))));

/** A transition without its SEND commands (the keeper's duties, checked by their own tests). */
function withoutSends(result: Transition): Transition {
  return result.ok ? { ...result, commands: result.commands.filter((command) => command.type !== 'SEND') } : result;
}

const label = (e: TradeEvent) => (e.type === 'UNLOCK_CONFIRMED' ? `${e.type}:${e.side}` : e.type);
const ARM_LOCK: TradeCommand = { type: 'ARM_TIMER', event: 'LOCK_WINDOW_CLOSED' };
const CANCEL_RESERVATION: TradeCommand = { type: 'CANCEL_TIMER', event: 'RESERVATION_EXPIRED' };
const CANCEL_LOCK: TradeCommand = { type: 'CANCEL_TIMER', event: 'LOCK_WINDOW_CLOSED' };

/**
 * The expected outcome of every (status, event), written out as a table: the next status with every
 * command in order (timers included), or `refused`, `duplicate`, `stale` (a timer whose state is
 * over: a no-op), `claim` (unlocks, checked below), `release` (the lock's release: applies only before the
 * ad-side unlock, checked below).
 */
const TABLE: Record<string, Record<string, string | [string, TradeCommand[]]>> = {
  PENDING: {
    DEPOSIT_CONFIRMED: ['DEPOSITED', [CANCEL_RESERVATION, ARM_LOCK, { type: 'PROVE' }]],
    RESERVATION_EXPIRED: ['EXPIRED', [{ type: 'RELEASE_RESERVATION' }]],
    LOCK_WINDOW_CLOSED: 'stale', LOCK_CONFIRMED: 'refused', 'UNLOCK_CONFIRMED:ad': 'refused', 'UNLOCK_CONFIRMED:order': 'refused',
    LOCK_RELEASED: 'refused',
  },
  DEPOSITED: {
    DEPOSIT_CONFIRMED: 'duplicate', RESERVATION_EXPIRED: 'stale',
    LOCK_WINDOW_CLOSED: ['EXPIRED', [{ type: 'RELEASE_RESERVATION' }]],
    LOCK_CONFIRMED: ['LOCKED', [CANCEL_LOCK, { type: 'RESERVATION_TO_LOCK' }]],
    'UNLOCK_CONFIRMED:ad': 'refused', 'UNLOCK_CONFIRMED:order': 'refused', LOCK_RELEASED: 'refused',
  },
  LOCKED: {
    DEPOSIT_CONFIRMED: 'duplicate', RESERVATION_EXPIRED: 'stale', LOCK_WINDOW_CLOSED: 'stale', LOCK_CONFIRMED: 'duplicate',
    'UNLOCK_CONFIRMED:ad': 'claim', 'UNLOCK_CONFIRMED:order': 'claim', LOCK_RELEASED: 'release',
  },
  SETTLED: {
    DEPOSIT_CONFIRMED: 'duplicate', RESERVATION_EXPIRED: 'stale', LOCK_WINDOW_CLOSED: 'stale', LOCK_CONFIRMED: 'duplicate',
    'UNLOCK_CONFIRMED:ad': 'claim', 'UNLOCK_CONFIRMED:order': 'claim', LOCK_RELEASED: 'refused',
  },
  EXPIRED: {
    DEPOSIT_CONFIRMED: 'refused', RESERVATION_EXPIRED: 'stale', LOCK_WINDOW_CLOSED: 'stale', LOCK_CONFIRMED: 'refused',
    'UNLOCK_CONFIRMED:ad': 'refused', 'UNLOCK_CONFIRMED:order': 'refused', LOCK_RELEASED: 'duplicate',
  },
};

describe('the trade state machine', () => {
  it('answers every state x event as the table says, timer commands included (what the keeper owes is checked below)', () => {
    for (const state of STATES) {
      for (const event of EVENTS.filter((e) => e.type !== 'PROOF_READY')) {
        const result = withoutSends(transition(state, event));
        const expected = TABLE[state.status]![label(event)]!;
        const where = `${JSON.stringify(state)} + ${label(event)}`;
        if (expected === 'refused') expect(result, where).toMatchObject({ ok: false, duplicate: false, stale: false });
        else if (expected === 'duplicate') expect(result, where).toMatchObject({ ok: false, duplicate: true, stale: false });
        else if (expected === 'stale') expect(result, where).toMatchObject({ ok: false, duplicate: false, stale: true });
        else if (expected === 'claim') {
          const side = (event as { side: 'ad' | 'order' }).side;
          const already = side === 'ad' ? state.bridgerClaimed : state.adCreatorClaimed;
          if (already) { expect(result, where).toMatchObject({ ok: false, duplicate: true }); continue; }
          expect(result.ok, where).toBe(true);
          if (!result.ok) continue;
          const both = (side === 'ad' || state.bridgerClaimed) && (side === 'order' || state.adCreatorClaimed);
          expect(result.state.status, where).toBe(both ? 'SETTLED' : state.status);
          expect(result.commands, where).toEqual(side === 'ad' ? [{ type: 'PAY_OUT_LOCK' }] : []);
        } else if (expected === 'release') {
          // Released only while the ad-side unlock is not confirmed: the lock goes back to the ad, the trade ends.
          if (state.bridgerClaimed) expect(result, where).toMatchObject({ ok: false, duplicate: false, stale: false });
          else expect(result, where).toEqual({ ok: true, state: { ...state, status: 'EXPIRED' }, commands: [{ type: 'RETURN_LOCK' }] });
        } else {
          const [status, commands] = expected;
          expect(result, where).toEqual({ ok: true, state: expect.objectContaining({ status }), commands });
        }
      }
    }
  });

  it('marks the proof ready once, only after it was asked for, and touches no timer', () => {
    for (const state of STATES) {
      const result = withoutSends(transition(state, { type: 'PROOF_READY' }));
      if (state.proof === 'running') expect(result).toEqual({ ok: true, state: { ...state, proof: 'ready' }, commands: [] });
      else expect(result).toMatchObject({ ok: false, duplicate: state.proof === 'ready', stale: false });
    }
  });

  it('arms a timer in every state that has one and cancels it when the state is left, never the one that fired', () => {
    // Replay each state's transitions: the armed timer (at most one) is exactly the new state's.
    for (const state of STATES) {
      for (const event of EVENTS) {
        const result = transition(state, event);
        if (!result.ok) continue;
        const timersOf = (s: TradeState) => (s.status === 'PENDING' ? ['RESERVATION_EXPIRED'] : s.status === 'DEPOSITED' ? ['LOCK_WINDOW_CLOSED'] : []);
        const armed = new Set(timersOf(state));
        armed.delete(event.type); // a timer that fired is gone
        for (const c of result.commands) {
          if (c.type === 'ARM_TIMER') armed.add(c.event);
          if (c.type === 'CANCEL_TIMER') {
            expect(armed.has(c.event), `${JSON.stringify(state)} + ${label(event)} cancels an unarmed ${c.event}`).toBe(true);
            armed.delete(c.event);
          }
        }
        expect([...armed], `${JSON.stringify(state)} + ${label(event)}`).toEqual(timersOf(result.state));
      }
    }
  });

  it('starts a trade PENDING with its reservation timer armed', () => {
    expect(start()).toEqual({ state: INITIAL_STATE, commands: [{ type: 'ARM_TIMER', event: 'RESERVATION_EXPIRED' }] });
  });

  it('resumes every state after a restart with its own timer and its unfinished proof', () => {
    for (const state of STATES) {
      const expected: TradeCommand[] = [];
      if (state.status === 'PENDING') expected.push({ type: 'ARM_TIMER', event: 'RESERVATION_EXPIRED' });
      if (state.status === 'DEPOSITED') expected.push({ type: 'ARM_TIMER', event: 'LOCK_WINDOW_CLOSED' });
      if (state.proof === 'running' && !isTerminal(state)) expected.push({ type: 'PROVE' });
      expect(resume(state), JSON.stringify(state)).toEqual(expected);
    }
  });

  it('gives each armed timer its own deadline and passes the other follow-ups through', () => {
    const deadlines = { reservationExpiresAt: '2030-01-01T00:00:00.000Z', lockDeadline: '2030-01-02T00:00:00.000Z' };
    expect(followUpsOf([
      { type: 'ARM_TIMER', event: 'RESERVATION_EXPIRED' }, CANCEL_RESERVATION, ARM_LOCK, { type: 'PROVE' }, { type: 'RESERVATION_TO_LOCK' },
    ], deadlines)).toEqual([
      { type: 'ARM_TIMER', event: 'RESERVATION_EXPIRED', at: deadlines.reservationExpiresAt }, CANCEL_RESERVATION,
      { type: 'ARM_TIMER', event: 'LOCK_WINDOW_CLOSED', at: deadlines.lockDeadline }, { type: 'PROVE' },
    ]);
  });

  it('walks the happy path to SETTLED, paying the lock out once', () => {
    let state = INITIAL_STATE;
    const commands: string[] = [];
    for (const event of [EVENTS[0]!, EVENTS[3]!, EVENTS[4]!, EVENTS[5]!, EVENTS[6]!]) {
      const result = transition(state, event);
      if (!result.ok) throw new Error(result.reason);
      state = result.state;
      commands.push(...result.commands.map((c) => (c.type === 'SEND' ? `SEND ${c.action} ${c.side}` : c.type)));
    }
    expect(state).toEqual({ status: 'SETTLED', proof: 'ready', bridgerClaimed: true, adCreatorClaimed: true });
    expect(commands).toEqual([
      'CANCEL_TIMER', 'ARM_TIMER', 'PROVE', 'CANCEL_TIMER', 'RESERVATION_TO_LOCK', 'SEND releaseLock ad', 'SEND unlock ad', 'PAY_OUT_LOCK', 'SEND unlock order',
    ]);
    expect(isTerminal(state)).toBe(true);
  });

  it('gives the lock only to a DEPOSITED trade, in every state, and the lock then applies', () => {
    for (const state of STATES) {
      const due = lockDue(state);
      const where = JSON.stringify(state);
      if (state.status === 'DEPOSITED') {
        expect(due, where).toEqual({ ok: true });
        expect(transition(state, { type: 'LOCK_CONFIRMED' }).ok, where).toBe(true);
      } else {
        expect(due, where).toEqual({ missing: `the trade is ${state.status}, lock needs a confirmed deposit (DEPOSITED)` });
      }
    }
  });

  it('ends a LOCKED trade whose lock was released before the ad-side unlock: the lock back to the ad once, the trade over', () => {
    const locked: TradeState = { status: 'LOCKED', proof: 'ready', bridgerClaimed: false, adCreatorClaimed: false };
    const released = transition(locked, { type: 'LOCK_RELEASED' });
    // The Bridger's deposit is still in the OrderPortal: the keeper owes its refund.
    expect(released).toEqual({
      ok: true, state: { ...locked, status: 'EXPIRED' }, commands: [{ type: 'RETURN_LOCK' }, { type: 'SEND', action: 'refund', side: 'order' }],
    });
    if (!released.ok) return;
    expect(isTerminal(released.state)).toBe(true);
    // Delivered again (the Maker's report and the audit): a duplicate, nothing moves twice.
    expect(transition(released.state, { type: 'LOCK_RELEASED' })).toMatchObject({ ok: false, duplicate: true });
    // Nothing pays the Bridger afterwards: no unlock applies and none is handed out.
    expect(transition(released.state, { type: 'UNLOCK_CONFIRMED', side: 'ad' })).toMatchObject({ ok: false, duplicate: false });
    expect(unlockDue(released.state, 'maker')).toEqual({ missing: expect.stringMatching(/EXPIRED/) });
    expect(awaitedAction(released.state, 'unlock')).toMatchObject({ ok: false });
  });

  it('gives the Maker the ad-side unlock first and nobody the order side before it is confirmed', () => {
    const locked: TradeState = { status: 'LOCKED', proof: 'ready', bridgerClaimed: false, adCreatorClaimed: false };
    expect(unlockDue({ ...locked, proof: 'running' }, 'maker')).toEqual({ missing: expect.stringMatching(/proof is not ready/), awaited: true });
    expect(unlockDue({ ...locked, status: 'DEPOSITED' }, 'maker')).toEqual({ missing: expect.stringMatching(/needs LOCKED/) });
    expect(unlockDue(locked, 'maker')).toEqual({ side: 'ad' });
    // The Bridger's default stays the spec's (the order side): it waits for the ad side, and is told it may take it.
    expect(unlockDue(locked, 'bridger')).toEqual({ missing: expect.stringMatching(/^unlock order: the ad-chain unlock \(which pays the Bridger\) comes first.*ask for it yourself with \{"signature", "side": "ad"\}/), awaited: true });
    expect(unlockDue(locked, 'bridger', 'order')).toEqual(unlockDue(locked, 'bridger'));
    expect(unlockDue(locked, 'maker', 'order')).toEqual({ missing: expect.stringMatching(/^unlock order: the ad-chain unlock .* comes first/), awaited: true });
    const adDone = { ...locked, bridgerClaimed: true };
    expect(unlockDue(adDone, 'bridger')).toEqual({ side: 'order' });
    expect(unlockDue(adDone, 'maker')).toEqual({ side: 'order' });
    expect(unlockDue({ ...adDone, adCreatorClaimed: true, status: 'SETTLED' }, 'bridger')).toEqual({ missing: expect.stringMatching(/settled/) });
  });

  it('gives the Bridger the ad-side unlock when it asks for that side, once LOCKED with the proof ready, and never the order side first', () => {
    const locked: TradeState = { status: 'LOCKED', proof: 'ready', bridgerClaimed: false, adCreatorClaimed: false };
    expect(unlockDue(locked, 'bridger', 'ad')).toEqual({ side: 'ad' });
    expect(unlockDue(locked, 'maker', 'ad')).toEqual({ side: 'ad' });
    // Not before its time: the proof, the lock.
    expect(unlockDue({ ...locked, proof: 'running' }, 'bridger', 'ad')).toEqual({ missing: expect.stringMatching(/proof is not ready/), awaited: true });
    for (const status of ['PENDING', 'DEPOSITED', 'EXPIRED'] as const) {
      expect(unlockDue({ ...locked, status }, 'bridger', 'ad'), status).toEqual({ missing: expect.stringMatching(/needs LOCKED/) });
    }
    // Once the ad side is confirmed (by whoever sent it) it is not handed out again; the order side is, to either party.
    const adDone = { ...locked, bridgerClaimed: true };
    for (const role of ['maker', 'bridger'] as const) {
      expect(unlockDue(adDone, role, 'ad'), role).toEqual({ missing: expect.stringMatching(/ad-chain unlock is already confirmed/) });
      expect(unlockDue(adDone, role, 'order'), role).toEqual({ side: 'order' });
    }
    // The Bridger alone: ad side, then the order side, then nothing.
    const ad = transition(locked, { type: 'UNLOCK_CONFIRMED', side: 'ad' });
    if (!ad.ok) throw new Error(ad.reason);
    expect(unlockDue(ad.state, 'bridger')).toEqual({ side: 'order' });
    const order = transition(ad.state, { type: 'UNLOCK_CONFIRMED', side: 'order' });
    if (!order.ok) throw new Error(order.reason);
    expect(order.state).toEqual({ status: 'SETTLED', proof: 'ready', bridgerClaimed: true, adCreatorClaimed: true });
    expect(unlockDue(order.state, 'bridger', 'ad')).toEqual({ missing: expect.stringMatching(/settled/) });
  });

  it('never hands out the order side before the ad side is confirmed, to anyone asking anything, in every state', () => {
    for (const state of STATES) {
      for (const role of ['maker', 'bridger'] as const) {
        for (const asked of [undefined, 'ad', 'order'] as const) {
          const due = unlockDue(state, role, asked);
          if (!('side' in due)) continue;
          const where = `${JSON.stringify(state)} ${role} ${asked}`;
          // Handed out only the unlock in turn, and only then.
          expect(due.side, where).toBe(unlockInTurn(state));
          expect(askableUnlock(state), where).toBe(due.side);
          if (due.side === 'order') expect(state.bridgerClaimed, where).toBe(true);
        }
      }
    }
  });

  it('names the side in turn, its default party and who may ask for it, from one rule (the API, the events and the confirm read these)', () => {
    const locked: TradeState = { status: 'LOCKED', proof: 'ready', bridgerClaimed: false, adCreatorClaimed: false };
    expect([unlockInTurn(locked), whoseUnlockIsDue(locked), unlockableBy(locked)]).toEqual(['ad', 'MAKER', ['MAKER', 'BRIDGER']]);
    const adDone = { ...locked, bridgerClaimed: true };
    expect([unlockInTurn(adDone), whoseUnlockIsDue(adDone), unlockableBy(adDone)]).toEqual(['order', 'BRIDGER', ['BRIDGER', 'MAKER']]);
    // A row without its proof state (GET /v1/trades/:id) is read as proved; a proof under way hands out nothing yet.
    const { proof: _, ...row } = locked;
    expect(unlockableBy(row)).toEqual(['MAKER', 'BRIDGER']);
    expect(unlockableBy({ ...locked, proof: 'running' })).toEqual([]);
    for (const state of STATES.filter((s) => s.status !== 'LOCKED')) {
      expect([unlockInTurn(state), whoseUnlockIsDue(state), unlockableBy(state)], JSON.stringify(state)).toEqual([null, null, []]);
    }
    // The confirm takes the unlock in turn, whichever party reports it.
    expect(awaitedAction(locked, 'unlock')).toEqual({ ok: true, action: { name: 'unlock', side: 'ad' } });
  });
});

describe('which transaction a confirm must be', () => {
  const DEPOSIT: TradeAction = { name: 'createOrder', side: 'order' };
  const LOCK: TradeAction = { name: 'lockForOrder', side: 'ad' };
  const RELEASE: TradeAction = { name: 'releaseLock', side: 'ad' };

  it('through /confirm: the deposit until it is confirmed, the lock after, its release while LOCKED before the ad-side unlock, in every state', () => {
    for (const state of STATES) {
      const deposited = state.status !== 'PENDING' && !(state.status === 'EXPIRED' && state.proof === 'none');
      const releasable = state.status === 'LOCKED' && !state.bridgerClaimed;
      expect(awaitedAction(state, 'deposit-or-lock'), JSON.stringify(state)).toEqual({ ok: true, action: releasable ? RELEASE : deposited ? LOCK : DEPOSIT });
    }
  });

  it('through /unlock/confirm: the ad-side unlock, then the order side, only while LOCKED, in every state', () => {
    for (const state of STATES) {
      const awaited = awaitedAction(state, 'unlock');
      const where = JSON.stringify(state);
      if (state.status === 'LOCKED' && !(state.bridgerClaimed && state.adCreatorClaimed)) {
        expect(awaited, where).toEqual({ ok: true, action: { name: 'unlock', side: state.bridgerClaimed ? 'order' : 'ad' } });
      } else if (state.status === 'LOCKED') expect(awaited, where).toEqual({ ok: false, reason: expect.stringMatching(/both unlocks are confirmed/) });
      else expect(awaited, where).toEqual({ ok: false, reason: expect.stringMatching(state.status === 'SETTLED' ? /settled/ : /LOCKED/) });
    }
  });

  it('refuses a recorded transaction sent to the other endpoint: the deposit or lock to unlock/confirm, an unlock to confirm', () => {
    for (const action of ['createOrder', 'lockForOrder', 'releaseLock', 'unlock'] as const) {
      expect(recordedActionFits(action, 'deposit-or-lock'), action).toBe(action !== 'unlock');
      expect(recordedActionFits(action, 'unlock'), action).toBe(action === 'unlock');
    }
  });

  it('turns each verified action into its machine event, and every awaited action is one the machine applies or calls a duplicate', () => {
    expect(eventOf(DEPOSIT)).toEqual({ type: 'DEPOSIT_CONFIRMED' });
    expect(eventOf(LOCK)).toEqual({ type: 'LOCK_CONFIRMED' });
    expect(eventOf(RELEASE)).toEqual({ type: 'LOCK_RELEASED' });
    expect(eventOf({ name: 'unlock', side: 'ad' })).toEqual({ type: 'UNLOCK_CONFIRMED', side: 'ad' });
    expect(eventOf({ name: 'unlock', side: 'order' })).toEqual({ type: 'UNLOCK_CONFIRMED', side: 'order' });
    // No awaited action is one the machine would refuse as a conflict, except a late one on an EXPIRED trade.
    for (const state of STATES) {
      for (const kind of ['deposit-or-lock', 'unlock'] as const) {
        const awaited = awaitedAction(state, kind);
        if (!awaited.ok) continue;
        const result = transition(state, eventOf(awaited.action));
        if (state.status === 'EXPIRED') expect(result, JSON.stringify(state)).toMatchObject({ ok: false, duplicate: false });
        else expect(result.ok || result.duplicate, `${JSON.stringify(state)} ${kind}`).toBe(true);
      }
    }
  });
});

describe('the lock window decided by the ad chain (lockWindowVerdict)', () => {
  const deposited: TradeState = { ...INITIAL_STATE, status: 'DEPOSITED', proof: 'running' };
  const deadline = 1_000_000n;

  it('delivers the lock the AdManager holds instead of expiring, whatever the chain\'s time', () => {
    for (const chainTime of [deadline - 100n, deadline, deadline + 1n, deadline + 86_400n]) {
      expect(lockWindowVerdict(deposited, { readable: true, locked: true, chainTime }, deadline), String(chainTime)).toEqual({ do: 'lock' });
    }
    // The lock then applies: the reservation becomes the lock, the trade LOCKED.
    expect(transition(deposited, { type: 'LOCK_CONFIRMED' })).toMatchObject({ ok: true, state: { status: 'LOCKED' }, commands: expect.arrayContaining([{ type: 'RESERVATION_TO_LOCK' }]) });
  });

  it('waits while the chain\'s time is at or before the lock deadline (a lock may still be mined), for the seconds left, bounded', () => {
    const wait = (chainTime: bigint) => lockWindowVerdict(deposited, { readable: true, locked: false, chainTime }, deadline);
    expect(wait(deadline)).toEqual({ do: 'wait', seconds: LOCK_WINDOW_RECHECK_MIN_SECONDS, reason: 'chain-before-deadline' });
    expect(wait(deadline - 5n)).toEqual({ do: 'wait', seconds: 6, reason: 'chain-before-deadline' });
    expect(wait(deadline - 3_600n)).toEqual({ do: 'wait', seconds: LOCK_WINDOW_RECHECK_MAX_SECONDS, reason: 'chain-before-deadline' });
  });

  it('closes only once the chain\'s time is past the deadline with no lock: then the trade expires and the reservation goes back', () => {
    expect(lockWindowVerdict(deposited, { readable: true, locked: false, chainTime: deadline + 1n }, deadline)).toEqual({ do: 'close' });
    expect(transition(deposited, { type: 'LOCK_WINDOW_CLOSED' })).toMatchObject({
      ok: true, state: { status: 'EXPIRED' }, commands: [{ type: 'RELEASE_RESERVATION' }, { type: 'SEND', action: 'refund', side: 'order' }],
    });
  });

  it('closes on the service\'s clock a chain it cannot ask (no RPC URL), as a reservation does', () => {
    expect(lockWindowVerdict(deposited, { readable: false }, deadline)).toEqual({ do: 'close' });
  });

  it('leaves a trade that is not DEPOSITED to the machine, which calls the timer stale', () => {
    for (const state of STATES.filter((s) => s.status !== 'DEPOSITED')) {
      expect(lockWindowVerdict(state, { readable: true, locked: true, chainTime: deadline - 1n }, deadline), state.status).toEqual({ do: 'close' });
      expect(transition(state, { type: 'LOCK_WINDOW_CLOSED' }), state.status).toMatchObject({ ok: false, stale: true });
    }
  });

  it('looks again after the longest wait, saying why, when the AdManager shows a lock whose event cannot be delivered yet', () => {
    expect(lockEventMissing('not-found')).toEqual({ do: 'wait', seconds: LOCK_WINDOW_RECHECK_MAX_SECONDS, reason: 'lock-event-not-found' });
    expect(lockEventMissing('unverified')).toEqual({ do: 'wait', seconds: LOCK_WINDOW_RECHECK_MAX_SECONDS, reason: 'lock-event-unverified' });
    expect(lookAgain('lock-event-not-found', 15, Date.UTC(2026, 0, 1))).toEqual({
      type: 'ARM_TIMER', event: 'LOCK_WINDOW_CLOSED', at: '2026-01-01T00:00:15.000Z', again: true, reason: 'lock-event-not-found', delaySeconds: 15,
    });
  });
});

describe('the follow-ups the machine emits', () => {
  it('ends a trade whose state is terminal, and only then', () => {
    const deadlines = { reservationExpiresAt: '2026-01-01T00:10:00.000Z', lockDeadline: '2026-01-01T05:00:00.000Z' };
    for (const state of STATES) {
      const result = transition(state, { type: 'LOCK_WINDOW_CLOSED' });
      const after = result.ok ? result.state : state;
      const followUps = followUpsAfter(after, result.ok ? result.commands : [], deadlines);
      expect(followUps.some((f) => f.type === 'END'), JSON.stringify(after)).toBe(isTerminal(after));
      expect(endOf(after).length, JSON.stringify(after)).toBe(isTerminal(after) ? 1 : 0);
    }
  });
});

describe('what the keeper owes (SEND commands, keeper-duties.ts)', () => {
  const sendsOf = (result: Transition): string[] =>
    result.ok ? result.commands.flatMap((c) => (c.type === 'SEND' ? [`${c.action} ${c.side}`] : [])) : [];

  it('owes, for every state x event, exactly what an absent party would leave undone', () => {
    for (const state of STATES) {
      for (const event of EVENTS) {
        const result = transition(state, event);
        const where = `${JSON.stringify(state)} + ${label(event)}`;
        const expected: string[] = [];
        if (result.ok) {
          const next = result.state;
          // The deposit never locked: the Bridger's refund at refundTime.
          if (event.type === 'LOCK_WINDOW_CLOSED') expected.push('refund order');
          // A confirmed lock: its release at lockExpiry, and the ad side once the proof is ready.
          if (event.type === 'LOCK_CONFIRMED') expected.push('releaseLock ad', ...(state.proof === 'ready' ? ['unlock ad'] : []));
          if (event.type === 'PROOF_READY' && state.status === 'LOCKED' && !state.bridgerClaimed) expected.push('unlock ad');
          // The Bridger paid: the Maker's side.
          if (event.type === 'UNLOCK_CONFIRMED' && event.side === 'ad' && !next.adCreatorClaimed) expected.push('unlock order');
          // The lock went back to the ad: the deposit goes back to the Bridger.
          if (event.type === 'LOCK_RELEASED' && !state.adCreatorClaimed) expected.push('refund order');
        }
        expect(sendsOf(result), where).toEqual(expected);
      }
    }
  });

  it('owes nothing it would not still owe in the state it moves to', () => {
    // The states a trade can be in: a claim only once locked, SETTLED only with both.
    const reachable = (s: TradeState) => (s.status === 'PENDING' || s.status === 'DEPOSITED' ? !s.bridgerClaimed && !s.adCreatorClaimed
      : s.status === 'SETTLED' ? s.bridgerClaimed && s.adCreatorClaimed : true);
    for (const state of STATES.filter(reachable)) {
      for (const event of EVENTS) {
        const result = transition(state, event);
        if (!result.ok) continue;
        for (const command of result.commands) {
          if (command.type !== 'SEND') continue;
          const duty: KeeperDuty = { action: command.action, side: command.side };
          const stillOwed = keeperStillOwes(result.state, duty) || (duty.action === 'unlock' && duty.side === 'ad' && result.state.proof !== 'ready');
          expect(stillOwed, `${JSON.stringify(state)} + ${label(event)} owes ${duty.action} ${duty.side}`).toBe(true);
        }
      }
    }
  });

  it('stops owing a side once a party sent it, and the release once the Bridger is paid', () => {
    const locked: TradeState = { status: 'LOCKED', proof: 'ready', bridgerClaimed: false, adCreatorClaimed: false };
    expect(keeperStillOwes(locked, { action: 'unlock', side: 'ad' })).toBe(true);
    expect(keeperStillOwes(locked, { action: 'unlock', side: 'order' })).toBe(false);
    expect(keeperStillOwes(locked, { action: 'releaseLock', side: 'ad' })).toBe(true);
    const bridgerPaid = { ...locked, bridgerClaimed: true };
    expect(keeperStillOwes(bridgerPaid, { action: 'unlock', side: 'ad' })).toBe(false);
    expect(keeperStillOwes(bridgerPaid, { action: 'releaseLock', side: 'ad' })).toBe(false);
    expect(keeperStillOwes(bridgerPaid, { action: 'unlock', side: 'order' })).toBe(true);
    expect(keeperStillOwes({ ...bridgerPaid, adCreatorClaimed: true, status: 'SETTLED' }, { action: 'unlock', side: 'order' })).toBe(false);
    expect(keeperStillOwes({ ...locked, status: 'EXPIRED' }, { action: 'refund', side: 'order' })).toBe(true);
    expect(keeperStillOwes({ ...locked, status: 'EXPIRED', adCreatorClaimed: true }, { action: 'refund', side: 'order' })).toBe(false);
  });

  it('sends on the chain\'s time: after the grace, never after the window, early when the window is about to close', () => {
    const times = { lockExpiry: '100000', refundTime: '200000' };
    const adUnlock = keeperWindow({ action: 'unlock', side: 'ad' }, times);
    expect(adUnlock).toEqual({ notBefore: 0n, notAfter: 100000n - BigInt(KEEPER_SEND_MARGIN_SECONDS) });
    expect(keeperVerdict(adUnlock, 10000n, 600, 10599n)).toBe('wait');
    expect(keeperVerdict(adUnlock, 10000n, 600, 10600n)).toBe('send');
    // Due close to the window's end: the grace yields to the deadline.
    const urgent = adUnlock.notAfter! - BigInt(KEEPER_URGENT_BEFORE_SECONDS);
    expect(keeperVerdict(adUnlock, urgent - 10n, 600, urgent)).toBe('send');
    expect(keeperVerdict(adUnlock, 10000n, 600, adUnlock.notAfter!)).toBe('expired');
    const refund = keeperWindow({ action: 'refund', side: 'order' }, times);
    expect(refund).toEqual({ notBefore: 200000n, notAfter: null });
    expect(keeperVerdict(refund, 150000n, 0, 199999n)).toBe('wait');
    expect(keeperVerdict(refund, 150000n, 0, 200000n)).toBe('send');
    expect(keeperVerdict(keeperWindow({ action: 'releaseLock', side: 'ad' }, times), 0n, 0, 100000n)).toBe('send');
  });
});
