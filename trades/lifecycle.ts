import type { TradeStatus } from '../domain/index.ts';

/**
 * The trade lifecycle as a pure function: (state, event) -> (state, commands). Both orchestrators
 * (Temporal and embedded) feed it verified events and carry out the commands it returns; neither
 * decides anything itself. It imports nothing but the domain vocabulary, so Temporal's workflow
 * sandbox can run it.
 *
 * Sides, as the spec routes unlocks: the ad side is AdManager.unlock on the ad chain (pays the
 * Bridger; the Maker's call data), the order side is OrderPortal.unlock on the order chain (pays
 * the Maker; the Bridger's call data). `bridgerClaimed` / `adCreatorClaimed` say the Bridger / the
 * Maker has been paid.
 */

export interface TradeState {
  status: TradeStatus;
  proof: 'none' | 'running' | 'ready';
  /** AdManager.unlock confirmed: the Bridger is paid, the lock has left the ad. */
  bridgerClaimed: boolean;
  /** OrderPortal.unlock confirmed: the Maker is paid. */
  adCreatorClaimed: boolean;
}

export type UnlockSide = 'ad' | 'order';

export type TradeEvent =
  /** The Bridger's deposit (OrderPortal.createOrder) is verified and final. */
  | { type: 'DEPOSIT_CONFIRMED' }
  /** The reservation ran out (TRADE_RESERVATION_TTL) with no verified deposit. */
  | { type: 'RESERVATION_EXPIRED' }
  /** The lock window closed (the order's lock deadline) with no verified lock. */
  | { type: 'LOCK_WINDOW_CLOSED' }
  /** The proof exists and verified. */
  | { type: 'PROOF_READY' }
  /** The Maker's lock (AdManager.lockForOrder) is verified and final. */
  | { type: 'LOCK_CONFIRMED' }
  /** One side's unlock is verified and final. */
  | { type: 'UNLOCK_CONFIRMED'; side: UnlockSide };

export type TradeCommand =
  /** Give the reserved amount back to the ad's available balance. */
  | { type: 'RELEASE_RESERVATION' }
  /** Put the deposit's leaf into the mirrored tree, then produce the proof. */
  | { type: 'PROVE' }
  /** The reservation becomes a lock on the ad. */
  | { type: 'RESERVATION_TO_LOCK' }
  /** The lock leaves the ad: paid to the Bridger. */
  | { type: 'PAY_OUT_LOCK' };

export type Transition =
  | { ok: true; state: TradeState; commands: TradeCommand[] }
  /** The event does not apply in this state; nothing changes. `duplicate` when it already happened. */
  | { ok: false; duplicate: boolean; reason: string };

export const INITIAL_STATE: TradeState = { status: 'PENDING', proof: 'none', bridgerClaimed: false, adCreatorClaimed: false };

const TERMINAL: ReadonlySet<TradeStatus> = new Set(['SETTLED', 'EXPIRED']);

const refuse = (reason: string, duplicate = false): Transition => ({ ok: false, duplicate, reason });
const go = (state: TradeState, ...commands: TradeCommand[]): Transition => ({ ok: true, state, commands });

/** The next state and the commands to carry out, or why the event does not apply. */
export function transition(state: TradeState, event: TradeEvent): Transition {
  switch (event.type) {
    case 'DEPOSIT_CONFIRMED':
      if (state.status === 'PENDING') return go({ ...state, status: 'DEPOSITED', proof: 'running' }, { type: 'PROVE' });
      if (state.status === 'EXPIRED') return refuse('the reservation expired before the deposit was confirmed');
      return refuse('the deposit is already confirmed', true);

    case 'RESERVATION_EXPIRED':
      if (state.status !== 'PENDING') return refuse(`a ${state.status} trade does not expire by reservation`);
      return go({ ...state, status: 'EXPIRED' }, { type: 'RELEASE_RESERVATION' });

    case 'LOCK_WINDOW_CLOSED':
      if (state.status !== 'DEPOSITED') return refuse(`a ${state.status} trade has no open lock window`);
      // Nobody can lock any more: the amount goes back to the ad, the Bridger refunds on chain.
      return go({ ...state, status: 'EXPIRED' }, { type: 'RELEASE_RESERVATION' });

    case 'PROOF_READY':
      if (state.proof === 'ready') return refuse('the proof is already ready', true);
      if (state.proof !== 'running') return refuse('no proof was asked for');
      return go({ ...state, proof: 'ready' });

    case 'LOCK_CONFIRMED':
      if (state.status === 'DEPOSITED') return go({ ...state, status: 'LOCKED' }, { type: 'RESERVATION_TO_LOCK' });
      if (state.status === 'LOCKED' || state.status === 'SETTLED') return refuse('the lock is already confirmed', true);
      return refuse(state.status === 'PENDING' ? 'the deposit must be confirmed before the lock' : 'the trade expired');

    case 'UNLOCK_CONFIRMED': {
      if (state.status !== 'LOCKED' && state.status !== 'SETTLED') return refuse('unlocks need a LOCKED trade');
      const already = event.side === 'ad' ? state.bridgerClaimed : state.adCreatorClaimed;
      if (already) return refuse(`the ${event.side}-chain unlock is already confirmed`, true);
      const next: TradeState = event.side === 'ad' ? { ...state, bridgerClaimed: true } : { ...state, adCreatorClaimed: true };
      if (next.bridgerClaimed && next.adCreatorClaimed) next.status = 'SETTLED';
      return event.side === 'ad' ? go(next, { type: 'PAY_OUT_LOCK' }) : go(next);
    }
  }
}

/** True once nothing more can happen to the trade. */
export function isTerminal(state: TradeState): boolean {
  return TERMINAL.has(state.status);
}

/**
 * Which unlock a party may be given now, or why none. The ad side (pays the Bridger) comes first;
 * the order side (pays the Maker) only after the ad side is confirmed: the ad-side unlock is only
 * valid before the lock expiry, so were the order side first, a Maker could be paid, let the lock
 * expire and take it back. The Maker may also ask for the order side once it is due, so the Maker
 * is never left waiting on the Bridger to submit it.
 */
export function unlockDue(state: TradeState, role: 'maker' | 'bridger'): { side: UnlockSide } | { missing: string } {
  if (state.status !== 'LOCKED' && state.status !== 'SETTLED') return { missing: `the trade is ${state.status}, unlock needs LOCKED` };
  if (state.proof !== 'ready') return { missing: 'the proof is not ready yet: retry shortly' };
  if (!state.bridgerClaimed) {
    if (role === 'maker') return { side: 'ad' };
    return { missing: "unlock order: the Maker's ad-chain unlock (which pays you) comes first and must be confirmed before the order-chain unlock is issued; retry once it is (unlockDue on GET /v1/trades/{id} says whose unlock is due)" };
  }
  if (!state.adCreatorClaimed) return { side: 'order' };
  return { missing: 'both unlocks are confirmed: the trade is settled' };
}
