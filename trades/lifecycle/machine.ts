import { TERMINAL_TRADE_STATUSES, type TradeStatus } from '../../domain/index.ts';

/**
 * The trade machine as a pure function: (state, event) -> (state, commands). Both orchestrators
 * (Temporal and embedded) feed it verified events and carry out the commands it returns; neither
 * decides anything itself. It imports nothing but the domain vocabulary, so Temporal's workflow
 * sandbox can run it.
 *
 * Sides, as the spec routes unlocks: the ad side is AdManager.unlock on the ad chain (pays the
 * Bridger; the Maker's call data by default, the Bridger's on request), the order side is
 * OrderPortal.unlock on the order chain (pays the Maker; the Bridger's call data by default).
 * `bridgerClaimed` / `adCreatorClaimed` say the Bridger / the Maker has been paid.
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
  | { type: 'UNLOCK_CONFIRMED'; side: UnlockSide }
  /**
   * The Maker's lock was released on the AdManager (releaseLock / release_lock, from lockExpiry on,
   * the ad-side unlock never made): verified and final. The amount is back in the ad on chain.
   */
  | { type: 'LOCK_RELEASED' };

/** The timers of a trade, named by the event each delivers when it fires. */
export type TimerEvent = 'RESERVATION_EXPIRED' | 'LOCK_WINDOW_CLOSED';

export type TradeCommand =
  /** Give the reserved amount back to the ad's available balance. */
  | { type: 'RELEASE_RESERVATION' }
  /** Put the deposit's leaf into the mirrored tree, then produce the proof. */
  | { type: 'PROVE' }
  /** The reservation becomes a lock on the ad. */
  | { type: 'RESERVATION_TO_LOCK' }
  /** The lock leaves the ad: paid to the Bridger. */
  | { type: 'PAY_OUT_LOCK' }
  /** The lock goes back to the ad's available balance (to its Maker if the ad is closed, as the contract does). */
  | { type: 'RETURN_LOCK' }
  /** Start the timer that delivers `event` at its deadline (the reservation's expiry, the order's lock deadline). */
  | { type: 'ARM_TIMER'; event: TimerEvent }
  /** Stop that timer: the state it guarded is over. */
  | { type: 'CANCEL_TIMER'; event: TimerEvent }
  /**
   * The relayer owes this transaction if no party sends it (keeper-duties.ts says from when and
   * until when): the unlock of `side`, the refund of the deposit, or the lock's release. It is kept
   * in the keeper's outbox in the same database step, and dropped there once no longer owed.
   */
  | { type: 'SEND'; action: KeeperAction; side: UnlockSide };

/**
 * What the keeper may send for a trade: either side's `unlock` (pays that side's recipient, needs
 * a relayer request and the proof), `refund` (the order chain's deposit back to the Bridger, from
 * refundTime) or `releaseLock` (the ad chain's lock back to the ad, from lockExpiry).
 */
export type KeeperAction = 'unlock' | 'refund' | 'releaseLock';

export type Transition =
  | { ok: true; state: TradeState; commands: TradeCommand[] }
  /**
   * The event does not apply in this state; nothing changes. `duplicate` when it already happened;
   * `stale` when it is a timer whose state is over (the trade moved on before it fired): a no-op,
   * not an error.
   */
  | { ok: false; duplicate: boolean; stale: boolean; reason: string };

export const INITIAL_STATE: TradeState = { status: 'PENDING', proof: 'none', bridgerClaimed: false, adCreatorClaimed: false };

const refuse = (reason: string, duplicate = false): Transition => ({ ok: false, duplicate, stale: false, reason });
const stale = (reason: string): Transition => ({ ok: false, duplicate: false, stale: true, reason });
const go = (state: TradeState, ...commands: TradeCommand[]): Transition => ({ ok: true, state, commands });
const send = (action: KeeperAction, side: UnlockSide): TradeCommand => ({ type: 'SEND', action, side });

/** The timer running while the trade is in `state`: the reservation's, then the lock window's, then none. */
export function timerOf(state: TradeState): TimerEvent | undefined {
  if (state.status === 'PENDING') return 'RESERVATION_EXPIRED';
  if (state.status === 'DEPOSITED') return 'LOCK_WINDOW_CLOSED';
  return undefined;
}

/**
 * The timer commands of a move from `before` to `after`: cancel the timer of the state left
 * (unless it is the one that just fired), arm the timer of the state entered.
 */
export function timerCommands(before: TradeState, after: TradeState, fired?: TimerEvent): TradeCommand[] {
  const was = timerOf(before);
  const now = timerOf(after);
  if (was === now) return [];
  const commands: TradeCommand[] = [];
  if (was && was !== fired) commands.push({ type: 'CANCEL_TIMER', event: was });
  if (now) commands.push({ type: 'ARM_TIMER', event: now });
  return commands;
}

/** A new trade: its initial state and the commands that start its lifecycle (the reservation's timer). */
export function start(): { state: TradeState; commands: TradeCommand[] } {
  return { state: INITIAL_STATE, commands: [{ type: 'ARM_TIMER', event: 'RESERVATION_EXPIRED' }] };
}

/** The next state and the commands to carry out (timer commands included), or why the event does not apply. */
export function transition(state: TradeState, event: TradeEvent): Transition {
  const result = decide(state, event);
  if (!result.ok) return result;
  const fired = event.type === 'RESERVATION_EXPIRED' || event.type === 'LOCK_WINDOW_CLOSED' ? event.type : undefined;
  return go(result.state, ...timerCommands(state, result.state, fired), ...result.commands);
}

/** The state change and the balance and proof commands an event makes (timers added by `transition`). */
function decide(state: TradeState, event: TradeEvent): Transition {
  switch (event.type) {
    case 'DEPOSIT_CONFIRMED':
      if (state.status === 'PENDING') return go({ ...state, status: 'DEPOSITED', proof: 'running' }, { type: 'PROVE' });
      if (state.status === 'EXPIRED') return refuse('the reservation expired before the deposit was confirmed');
      return refuse('the deposit is already confirmed', true);

    case 'RESERVATION_EXPIRED':
      // The deposit came first: the timer is stale.
      if (state.status !== 'PENDING') return stale(`a ${state.status} trade does not expire by reservation`);
      return go({ ...state, status: 'EXPIRED' }, { type: 'RELEASE_RESERVATION' });

    case 'LOCK_WINDOW_CLOSED':
      // The lock came first, or the trade never got there: the timer is stale.
      if (state.status !== 'DEPOSITED') return stale(`a ${state.status} trade has no open lock window`);
      // Nobody can lock any more: the amount goes back to the ad, the deposit to the Bridger at refundTime.
      return go({ ...state, status: 'EXPIRED' }, { type: 'RELEASE_RESERVATION' }, send('refund', 'order'));

    case 'PROOF_READY':
      if (state.proof === 'ready') return refuse('the proof is already ready', true);
      if (state.proof !== 'running') return refuse('no proof was asked for');
      // A lock that came before the proof: the ad side is owed from now.
      if (state.status === 'LOCKED' && !state.bridgerClaimed) return go({ ...state, proof: 'ready' }, send('unlock', 'ad'));
      return go({ ...state, proof: 'ready' });

    case 'LOCK_CONFIRMED':
      if (state.status === 'DEPOSITED') {
        // The release at lockExpiry stays owed only while the ad side is not unlocked; the ad side is owed once the proof is ready.
        const unlock = state.proof === 'ready' ? [send('unlock', 'ad')] : [];
        return go({ ...state, status: 'LOCKED' }, { type: 'RESERVATION_TO_LOCK' }, send('releaseLock', 'ad'), ...unlock);
      }
      if (state.status === 'LOCKED' || state.status === 'SETTLED') return refuse('the lock is already confirmed', true);
      return refuse(state.status === 'PENDING' ? 'the deposit must be confirmed before the lock' : 'the trade expired');

    case 'UNLOCK_CONFIRMED': {
      if (state.status !== 'LOCKED' && state.status !== 'SETTLED') return refuse('unlocks need a LOCKED trade');
      const already = event.side === 'ad' ? state.bridgerClaimed : state.adCreatorClaimed;
      if (already) return refuse(`the ${event.side}-chain unlock is already confirmed`, true);
      const next: TradeState = event.side === 'ad' ? { ...state, bridgerClaimed: true } : { ...state, adCreatorClaimed: true };
      if (next.bridgerClaimed && next.adCreatorClaimed) next.status = 'SETTLED';
      // The Bridger is paid: the Maker's side is owed to it.
      return event.side === 'ad' ? go(next, { type: 'PAY_OUT_LOCK' }, ...(next.adCreatorClaimed ? [] : [send('unlock', 'order')])) : go(next);
    }

    case 'LOCK_RELEASED':
      // The contract releases only a lock never unlocked on the ad side, and only once: the trade
      // ends and its lock goes back to the ad. After the Bridger's unlock nothing is left to release.
      // The Bridger's deposit is still in the OrderPortal: it is owed back at refundTime.
      if (state.status === 'LOCKED' && !state.bridgerClaimed) {
        return go({ ...state, status: 'EXPIRED' }, { type: 'RETURN_LOCK' }, ...(state.adCreatorClaimed ? [] : [send('refund', 'order')]));
      }
      if (state.status === 'EXPIRED') return refuse('the trade already ended', true);
      if (state.status === 'LOCKED' || state.status === 'SETTLED') {
        return refuse('the ad-side unlock is confirmed: the lock was paid to the Bridger, not released');
      }
      return refuse('the lock is not confirmed: there is no lock to release');
  }
}

/** What keeps a stored trade going after a restart: the timer of its state, and its proof if it was under way. */
export function resume(state: TradeState): TradeCommand[] {
  const commands: TradeCommand[] = [];
  const timer = timerOf(state);
  if (timer) commands.push({ type: 'ARM_TIMER', event: timer });
  if (state.proof === 'running' && !isTerminal(state)) commands.push({ type: 'PROVE' });
  return commands;
}

/** True once nothing more can happen to the trade. */
export function isTerminal(state: TradeState): boolean {
  return TERMINAL_TRADE_STATUSES.has(state.status);
}

/**
 * Whether the Maker may be given the lock (`AdManager.lockForOrder` call data) now, or why not:
 * only once the deposit is confirmed and before the lock is (DEPOSITED). The lock window's close is
 * the caller's to check against the order's lock deadline; once it fires the trade is EXPIRED here.
 */
export function lockDue(state: TradeState): { ok: true } | { missing: string } {
  if (state.status === 'DEPOSITED') return { ok: true };
  return { missing: `the trade is ${state.status}, lock needs a confirmed deposit (DEPOSITED)` };
}


/** The machine's view of a stored trade (db/repositories/trade-lifecycle.ts rows carry these columns). */
export function stateOf(trade: { status: TradeStatus; proofState: TradeState['proof']; bridgerClaimed: boolean; adCreatorClaimed: boolean }): TradeState {
  return { status: trade.status, proof: trade.proofState, bridgerClaimed: trade.bridgerClaimed, adCreatorClaimed: trade.adCreatorClaimed };
}
