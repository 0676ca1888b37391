import { isTerminal, type TimerEvent, type TradeCommand, type TradeState } from './machine.ts';
import { lookAgainAt } from './windows.ts';

/** A trade's deadlines (ISO 8601): its timers fire at them. */
export interface TradeDeadlines {
  /** RESERVATION_EXPIRED fires then (windows.ts `reservationExpiry`). */
  reservationExpiresAt: string;
  /** LOCK_WINDOW_CLOSED fires then (windows.ts `lockDeadline`). */
  lockDeadline: string;
}

/** Why a fired lock window is looked at again instead of closing (lock-window.ts decides). */
export type LookAgainReason =
  /** The chain's time has not passed the lock deadline: a lock can still be mined. */
  | 'chain-before-deadline'
  /** The AdManager shows a lock but its event was not found yet. */
  | 'lock-event-not-found'
  /** The lock's event was found but could not be verified yet (not final, or refused for now). */
  | 'lock-event-unverified';

/** A command an orchestrator carries out (the balance commands run in the database step); timers come with their time. */
export type FollowUp =
  | { type: 'PROVE' }
  /**
   * `again`: the timer fired and is to be looked at once more at `at` (a lock window the chain has
   * not closed yet), `reason` and `delaySeconds` saying why and how long; an orchestrator that names a
   * trade's timer by trade and event gives this one a name of its own, the fired one being still in hand.
   */
  | { type: 'ARM_TIMER'; event: TimerEvent; at: string; again?: true; reason?: LookAgainReason; delaySeconds?: number }
  | { type: 'CANCEL_TIMER'; event: TimerEvent };

/** A follow-up as the outbox holds it: the machine's (prove, arm or cancel a timer), or the trade's end (its state terminal). */
export type TradeFollowUp = FollowUp | { type: 'END' };

/** The commands of a transition an orchestrator carries out, each timer given its deadline. */
export function followUpsOf(commands: readonly TradeCommand[], deadlines: TradeDeadlines): FollowUp[] {
  const followUps: FollowUp[] = [];
  for (const command of commands) {
    if (command.type === 'PROVE' || command.type === 'CANCEL_TIMER') followUps.push(command);
    if (command.type === 'ARM_TIMER') {
      const at = command.event === 'RESERVATION_EXPIRED' ? deadlines.reservationExpiresAt : deadlines.lockDeadline;
      followUps.push({ type: 'ARM_TIMER', event: command.event, at });
    }
  }
  return followUps;
}

/** The follow-ups of a move into `state` by `commands`: `followUpsOf` them, then END when `state` is terminal (the orchestrator stops there). */
export function followUpsAfter(state: TradeState, commands: readonly TradeCommand[], deadlines: TradeDeadlines): TradeFollowUp[] {
  return [...followUpsOf(commands, deadlines), ...endOf(state)];
}

/** What an event that changed nothing (a repeat, a stale timer) leaves to do: the trade's end if it is over, else nothing. */
export function endOf(state: TradeState): TradeFollowUp[] {
  return isTerminal(state) ? [{ type: 'END' }] : [];
}

/** Whether a timer of `event` may fire and be put off (looked at again by a timer of its own): only the lock window's. */
export function timerLooksAgain(event: TimerEvent): boolean {
  return event === 'LOCK_WINDOW_CLOSED';
}

/** The lock window's timer armed again `delaySeconds` after `nowMs` (the injected clock's reading), for `reason`. */
export function lookAgain(reason: LookAgainReason, delaySeconds: number, nowMs: number): TradeFollowUp {
  return { type: 'ARM_TIMER', event: 'LOCK_WINDOW_CLOSED', at: lookAgainAt(nowMs, delaySeconds), again: true, reason, delaySeconds };
}
