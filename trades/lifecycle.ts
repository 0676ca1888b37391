import type { TradeStatus, UnlockParty } from '../domain/index.ts';

/**
 * The trade lifecycle as a pure function: (state, event) -> (state, commands). Both orchestrators
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
  | { type: 'CANCEL_TIMER'; event: TimerEvent };

export type Transition =
  | { ok: true; state: TradeState; commands: TradeCommand[] }
  /**
   * The event does not apply in this state; nothing changes. `duplicate` when it already happened;
   * `stale` when it is a timer whose state is over (the trade moved on before it fired): a no-op,
   * not an error.
   */
  | { ok: false; duplicate: boolean; stale: boolean; reason: string };

export const INITIAL_STATE: TradeState = { status: 'PENDING', proof: 'none', bridgerClaimed: false, adCreatorClaimed: false };

const TERMINAL: ReadonlySet<TradeStatus> = new Set(['SETTLED', 'EXPIRED']);

const refuse = (reason: string, duplicate = false): Transition => ({ ok: false, duplicate, stale: false, reason });
const stale = (reason: string): Transition => ({ ok: false, duplicate: false, stale: true, reason });
const go = (state: TradeState, ...commands: TradeCommand[]): Transition => ({ ok: true, state, commands });

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

    case 'LOCK_RELEASED':
      // The contract releases only a lock never unlocked on the ad side, and only once: the trade
      // ends and its lock goes back to the ad. After the Bridger's unlock nothing is left to release.
      if (state.status === 'LOCKED' && !state.bridgerClaimed) return go({ ...state, status: 'EXPIRED' }, { type: 'RETURN_LOCK' });
      if (state.status === 'EXPIRED') return refuse('the trade already ended', true);
      if (state.status === 'LOCKED' || state.status === 'SETTLED') return refuse('the ad-side unlock is confirmed: the lock was paid to the Bridger, not released');
      return refuse('the lock is not confirmed: there is no lock to release');
  }
}

/**
 * The endpoint a transaction was reported through: `/confirm` (the deposit, later the lock) or
 * `/unlock/confirm` (either unlock).
 */
export type ConfirmationKind = 'deposit-or-lock' | 'unlock';

/** An on-chain action of a trade and the side (chain) it happens on: `order` = the order chain's OrderPortal, `ad` = the ad chain's AdManager. */
export type TradeAction =
  | { name: 'createOrder'; side: 'order' }
  | { name: 'lockForOrder'; side: 'ad' }
  | { name: 'unlock'; side: UnlockSide }
  /** AdManager.releaseLock: the Maker's lock back to the ad after lockExpiry (no relayer request). */
  | { name: 'releaseLock'; side: 'ad' };

/** Which action a transaction reported now must be, or why none is awaited (a conflict with the state). */
export type AwaitedAction = { ok: true; action: TradeAction } | { ok: false; reason: string };

/**
 * The action a transaction not yet recorded, reported through `kind`, must be in `state`:
 * `/confirm` takes the deposit until it is confirmed, the lock after (on an EXPIRED trade too, by
 * whether it was deposited, so that a real late deposit or lock is told apart from a wrong
 * transaction: the machine then refuses it as late, 409, not as foreign, 422), then on a LOCKED
 * trade whose ad-side unlock is not confirmed the lock's release (the Maker reports its
 * releaseLock after lockExpiry; the contract refuses it earlier); `/unlock/confirm` takes the
 * ad-side unlock, then the order-side one (the order in which `unlockDue` hands them out), and
 * only on a LOCKED trade.
 */
export function awaitedAction(state: TradeState, kind: ConfirmationKind): AwaitedAction {
  if (kind === 'deposit-or-lock') {
    if (state.status === 'LOCKED' && !state.bridgerClaimed) return { ok: true, action: { name: 'releaseLock', side: 'ad' } };
    const deposited = state.status !== 'PENDING' && !(state.status === 'EXPIRED' && state.proof === 'none');
    return deposited ? { ok: true, action: { name: 'lockForOrder', side: 'ad' } } : { ok: true, action: { name: 'createOrder', side: 'order' } };
  }
  if (state.status === 'SETTLED') return { ok: false, reason: 'both unlocks are confirmed: the trade is settled' };
  if (state.status !== 'LOCKED') return { ok: false, reason: `the trade is ${state.status}: unlocks need a LOCKED trade` };
  // The unlock in turn (`unlockInTurn`, the unlock order) whoever reports it: either party may send either side.
  const side = unlockInTurn(state);
  if (side === null) return { ok: false, reason: 'both unlocks are confirmed' };
  return { ok: true, action: { name: 'unlock', side } };
}

/**
 * Whether a transaction already recorded for this trade as `action` answers a report through
 * `kind`: the same endpoint again is a repeat (the machine then says `duplicate`); the deposit or
 * the lock sent to `/unlock/confirm`, or an unlock sent to `/confirm`, is a transaction of the
 * wrong kind and is refused.
 */
export function recordedActionFits(action: TradeAction['name'], kind: ConfirmationKind): boolean {
  return kind === 'unlock' ? action === 'unlock' : action !== 'unlock';
}

/** The machine event a verified action stands for. */
export function eventOf(action: TradeAction): TradeEvent {
  if (action.name === 'createOrder') return { type: 'DEPOSIT_CONFIRMED' };
  if (action.name === 'lockForOrder') return { type: 'LOCK_CONFIRMED' };
  if (action.name === 'releaseLock') return { type: 'LOCK_RELEASED' };
  return { type: 'UNLOCK_CONFIRMED', side: action.side };
}

/** What keeps a stored trade going after a restart: the timer of its state, and its proof if it was under way. */
export function resume(state: TradeState): TradeCommand[] {
  const commands: TradeCommand[] = [];
  const timer = timerOf(state);
  if (timer) commands.push({ type: 'ARM_TIMER', event: timer });
  if (state.proof === 'running' && !isTerminal(state)) commands.push({ type: 'PROVE' });
  return commands;
}

/**
 * What the ad chain says when a trade's lock window timer fires (read by the timer's activity from
 * the AdManager and the chain's latest block or ledger): `unreadable` when this service cannot ask
 * it (no RPC URL registered); a chain that can be asked but does not answer now is not a reading:
 * the activity throws and the timer is retried, never decided on a guess.
 */
export type LockWindowReading =
  | { readable: false }
  /** `locked`: the AdManager holds a lock for the order (Locked, or later Unlocked or Released). `chainTime`: the latest block's or ledger's timestamp, unix seconds. */
  | { readable: true; locked: boolean; chainTime: bigint };

/** What a fired lock window timer does (`lockWindowVerdict`): expire, deliver the chain's lock, or look again in `seconds`. */
export type LockWindowVerdict = { do: 'close' } | { do: 'lock' } | { do: 'wait'; seconds: number };

/** Longest wait before the lock window is looked at again while the chain's time has not passed the deadline. */
export const LOCK_WINDOW_RECHECK_MAX_SECONDS = 15;
/** Shortest such wait: a chain a second behind is not asked again at once. */
export const LOCK_WINDOW_RECHECK_MIN_SECONDS = 2;

/**
 * What a fired lock window timer does, decided by the chain, not by this service's clock: a lock
 * the AdManager holds is the trade's, reported or not (`lock`: its event is delivered as
 * LOCK_CONFIRMED, so the books keep the amount locked as the chain does); while the chain's latest
 * time is at or before the lock deadline (`deadline`, unix seconds: the last second lockForOrder is
 * accepted, chains/timing.ts) a lock can still be mined, so the window is looked at again (`wait`,
 * after the chain's remaining seconds, bounded to LOCK_WINDOW_RECHECK_MIN/MAX_SECONDS); only once
 * the chain's time is past it with no lock does the window close (`close`: LOCK_WINDOW_CLOSED, the
 * trade expires). A chain this service cannot ask (no RPC URL) closes on the service's clock, as a
 * reservation does (reservation-expiry.ts); a trade no longer DEPOSITED is the machine's stale
 * timer (`close` lets `transition` say so).
 */
export function lockWindowVerdict(state: TradeState, reading: LockWindowReading, deadline: bigint): LockWindowVerdict {
  if (state.status !== 'DEPOSITED' || !reading.readable) return { do: 'close' };
  if (reading.locked) return { do: 'lock' };
  if (reading.chainTime > deadline) return { do: 'close' };
  const left = Number(deadline - reading.chainTime) + 1;
  return { do: 'wait', seconds: Math.min(LOCK_WINDOW_RECHECK_MAX_SECONDS, Math.max(LOCK_WINDOW_RECHECK_MIN_SECONDS, left)) };
}

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

/** True once nothing more can happen to the trade. */
export function isTerminal(state: TradeState): boolean {
  return TERMINAL.has(state.status);
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

/** A caller's part in a trade, as the service tells it from the caller's wallets (the API's `UnlockParty` names them in capitals). */
export type Role = 'maker' | 'bridger';

/** What the unlock order reads of a trade: its status and which unlocks are confirmed (the API's trade rows carry these). */
export type UnlockClaims = Pick<TradeState, 'status' | 'bridgerClaimed' | 'adCreatorClaimed'>;

/**
 * The unlock order (architecture.md "Unlock order"), the one rule every view of it calls: on a
 * LOCKED trade the ad side (AdManager.unlock, pays the Bridger) is in turn until it is confirmed,
 * then the order side (OrderPortal.unlock, pays the Maker); none outside LOCKED. The ad side is
 * only valid before the lock expiry, so were the order side first, a Maker could be paid, let the
 * lock expire and take it back. Whoever sends an unlock, the contract pays that side's recipient,
 * so either party may take the one in turn (`unlockDue`).
 */
export function unlockInTurn(trade: UnlockClaims): UnlockSide | null {
  if (trade.status !== 'LOCKED') return null;
  if (!trade.bridgerClaimed) return 'ad';
  return trade.adCreatorClaimed ? null : 'order';
}

/**
 * The party whose call data targets the side in turn by default (the spec's routing: the Maker's
 * unlock targets the AdManager, the Bridger's the OrderPortal), as `unlockDue` on GET
 * /v1/trades/:id and in the pushed events says it: `MAKER` for the ad side, `BRIDGER` for the
 * order side, null when none is in turn. The other party may take it too (`unlockableBy`).
 */
export function whoseUnlockIsDue(trade: UnlockClaims): UnlockParty | null {
  const side = unlockInTurn(trade);
  return side === null ? null : side === 'ad' ? 'MAKER' : 'BRIDGER';
}

/**
 * Who may ask for the unlock in turn (`unlockDue` below says yes to them), the default party
 * first: the Maker and the Bridger for either side (the Bridger asks for the ad side with
 * `side: "ad"`, the Maker for the order side by default once the ad side is confirmed); nobody
 * when none is in turn. A trade row without its proof state is taken as proved: POST unlock
 * answers 409 with Retry-After until the proof is ready.
 */
export function unlockableBy(trade: UnlockClaims & { proof?: TradeState['proof'] }): UnlockParty[] {
  if (trade.proof !== undefined && trade.proof !== 'ready') return [];
  const side = unlockInTurn(trade);
  if (side === null) return [];
  const parties: UnlockParty[] = [];
  for (const [role, party] of [['maker', 'MAKER'], ['bridger', 'BRIDGER']] as const) {
    if ('side' in unlockDue({ ...trade, proof: 'ready' }, role, side)) parties.push(party);
  }
  return side === 'ad' ? parties : parties.reverse();
}

/** The unlock that may be asked for now (`unlockDue` hands it out): the one in turn, once the proof is ready. */
export function askableUnlock(state: TradeState): UnlockSide | null {
  return state.proof === 'ready' ? unlockInTurn(state) : null;
}

/**
 * The side a party's unlock targets when it does not name one: the Bridger's the order side (the
 * spec's default), the Maker's the ad side until that is confirmed, then the order side, so the
 * Maker is never left waiting on the Bridger to submit it.
 */
function defaultSide(state: UnlockClaims, role: Role): UnlockSide {
  if (role === 'bridger') return 'order';
  return state.bridgerClaimed ? 'order' : 'ad';
}

/**
 * Which unlock a party may be given now, or why none: `asked` (POST /v1/trades/:id/unlock's
 * `side`), else the party's default side, and only the side in turn (`unlockInTurn`). Either party
 * may take either side once the trade is LOCKED and the proof ready: whoever sends the ad-side
 * unlock, the AdManager pays the Bridger's recipient, so an absent Maker cannot hold the Bridger's
 * deposit until refundTime (the Bridger takes the ad side, then the order side); whoever sends the
 * order side, the OrderPortal pays the Maker's. The order side is refused while the ad side is not
 * confirmed (`awaited`: 409 with Retry-After), the ad side once it is.
 */
export function unlockDue(state: TradeState, role: Role, asked?: UnlockSide): { side: UnlockSide } | { missing: string; awaited?: true } {
  if (state.status !== 'LOCKED' && state.status !== 'SETTLED') return { missing: `the trade is ${state.status}, unlock needs LOCKED` };
  if (state.proof !== 'ready') return { missing: 'the proof is not ready yet: retry shortly', awaited: true };
  const inTurn = unlockInTurn(state);
  if (inTurn === null) return { missing: 'both unlocks are confirmed: the trade is settled' };
  const side = asked ?? defaultSide(state, role);
  if (side === inTurn) return { side };
  if (side === 'ad') return { missing: 'the ad-chain unlock is already confirmed (bridgerClaimed): the order-chain unlock is in turn, ask for side "order"' };
  const yours = role === 'bridger'
    ? 'ask for it yourself with {"signature", "side": "ad"} (the AdManager pays your recipient whoever sends it; the Maker may send it too) and confirm it, or retry once it is confirmed'
    : 'ask for it with side "ad" (or without a side) and confirm it, or retry once the Bridger has';
  return {
    missing: `unlock order: the ad-chain unlock (which pays the Bridger) comes first and must be confirmed before the order-chain unlock is issued; ${yours} (unlockDue and unlockableBy on GET /v1/trades/{id} say which unlock is in turn)`,
    awaited: true,
  };
}
