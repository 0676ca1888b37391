import type { KeeperAction, TradeState, UnlockSide } from './machine.ts';

/**
 * What the relayer's keeper owes a trade and when: the machine says a transaction is owed (its SEND
 * command), this module says until when it stays owed and the window it may be sent in, in the
 * target chain's own time (unix seconds, the order's times), so a clock moved on a chain moves the
 * keeper with it and the wall clock decides nothing.
 */

/** A transaction the keeper may owe: the action and the chain side it runs on. */
export interface KeeperDuty {
  action: KeeperAction;
  side: UnlockSide;
}

/**
 * How long before a side's window closes the keeper stops waiting for a party: from then on it
 * sends at once, whatever grace is left, so the send lands before the contract refuses it.
 */
export const KEEPER_URGENT_BEFORE_SECONDS = 900;

/**
 * How long before a side's window closes the keeper gives up broadcasting: a transaction sent later
 * may be mined after the close and revert, costing gas and paying nobody.
 */
export const KEEPER_SEND_MARGIN_SECONDS = 120;

// The configuration takes its default from windows.ts, where every window's default lives.
export { DEFAULT_KEEPER_UNLOCK_AFTER_SECONDS } from './windows.ts';

/**
 * Whether `duty` is still owed in `state`: an unlock until it is confirmed (the ad side once the
 * proof is ready, the order side once the ad side is confirmed), the lock's release while the ad
 * side is not unlocked, the refund while the order side is not. A duty no longer owed (a party sent
 * it, the trade moved on) is never sent.
 */
export function keeperStillOwes(state: TradeState, duty: KeeperDuty): boolean {
  switch (duty.action) {
    case 'unlock':
      if (state.status !== 'LOCKED') return false;
      return duty.side === 'ad' ? state.proof === 'ready' && !state.bridgerClaimed : state.bridgerClaimed && !state.adCreatorClaimed;
    case 'releaseLock':
      return state.status === 'LOCKED' && !state.bridgerClaimed;
    case 'refund':
      return state.status === 'EXPIRED' && !state.adCreatorClaimed;
  }
}

/** A duty's window on its chain: not before `notBefore`, not after `notAfter` (null: no end), unix seconds. */
export interface KeeperWindow {
  notBefore: bigint;
  notAfter: bigint | null;
}

/**
 * When the contracts accept `duty`: an unlock until its side closes (the ad side at lockExpiry, the
 * order side at refundTime) less the send margin; the release from lockExpiry, the refund from
 * refundTime, with no end (the contract takes them any time after).
 */
export function keeperWindow(duty: KeeperDuty, times: { lockExpiry: string; refundTime: string }): KeeperWindow {
  switch (duty.action) {
    case 'unlock': {
      const closes = BigInt(duty.side === 'ad' ? times.lockExpiry : times.refundTime);
      return { notBefore: 0n, notAfter: closes - BigInt(KEEPER_SEND_MARGIN_SECONDS) };
    }
    case 'releaseLock':
      return { notBefore: BigInt(times.lockExpiry), notAfter: null };
    case 'refund':
      return { notBefore: BigInt(times.refundTime), notAfter: null };
  }
}

/** The grace a party has to send `duty` itself before the keeper does: the unlocks wait, the timeouts do not (nobody else is coming). */
export function keeperGraceSeconds(duty: KeeperDuty, unlockAfterSeconds: number): number {
  return duty.action === 'unlock' ? unlockAfterSeconds : 0;
}

/** What the keeper does with an owed duty at the chain's time `chainNow`. */
export type KeeperVerdict = 'wait' | 'send' | 'expired';

/**
 * Judged on the target chain's time: past `notAfter` it is expired; from the later of `notBefore`
 * and (`dueAt` + `graceSeconds`) it is sent, but never later than KEEPER_URGENT_BEFORE_SECONDS
 * before `notAfter` (the grace yields to the deadline); before that it waits.
 */
export function keeperVerdict(window: KeeperWindow, dueAt: bigint, graceSeconds: number, chainNow: bigint): KeeperVerdict {
  if (window.notAfter !== null && chainNow >= window.notAfter) return 'expired';
  let sendAt = dueAt + BigInt(graceSeconds);
  if (window.notAfter !== null) {
    const urgent = window.notAfter - BigInt(KEEPER_URGENT_BEFORE_SECONDS);
    if (urgent < sendAt) sendAt = urgent;
  }
  if (sendAt < window.notBefore) sendAt = window.notBefore;
  return chainNow >= sendAt ? 'send' : 'wait';
}
