import type { TimerEvent, TradeCommand } from './machine.ts';

/** A trade's deadlines (ISO 8601): its timers fire at them. */
export interface TradeDeadlines {
  /** RESERVATION_EXPIRED fires then (TRADE_RESERVATION_TTL after creation). */
  reservationExpiresAt: string;
  /** LOCK_WINDOW_CLOSED fires then (the order's lock deadline, chains/timing.ts). */
  lockDeadline: string;
}

/** A command an orchestrator carries out (the balance commands run in the database step); timers come with their time. */
export type FollowUp =
  | { type: 'PROVE' }
  /**
   * `again`: the timer fired and is to be looked at once more at `at` (a lock window the chain has
   * not closed yet); an orchestrator that names a trade's timer by trade and event gives this one a
   * name of its own, the fired one being still in hand.
   */
  | { type: 'ARM_TIMER'; event: TimerEvent; at: string; again?: true }
  | { type: 'CANCEL_TIMER'; event: TimerEvent };

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

