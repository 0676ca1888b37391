/**
 * The trade lifecycle (README.md here): every decision about a trade's next state. Pure: it imports
 * only the domain vocabulary and itself (the import rules check it), so Temporal's workflow sandbox
 * can run it. Importers take the public surface from here.
 */
export {
  INITIAL_STATE, isTerminal, lockDue, resume, start, stateOf, timerCommands, timerOf, transition,
  type KeeperAction, type TimerEvent, type TradeCommand, type TradeEvent, type TradeState, type Transition, type UnlockSide,
} from './machine.ts';
export {
  CHAIN_FACTS, MANAGER_ORDER_STATES, PORTAL_ORDER_STATES, actionOf, chainFact, chainFactOf, eventOf, orderStateName, recordedAction, recordedActionFits,
  type ChainFact, type ConfirmationKind, type ManagerOrderState, type OrderStates, type PortalOrderState, type TradeAction, type TradeContract,
} from './chain-facts.ts';
export { awaitedAction, type AwaitedAction } from './awaited.ts';
export { PARTY_OF, UNLOCK_SIDES, unlockDue, unlockInTurn, type Role, type UnlockClaims } from './unlock-order.ts';
export { askableUnlock, unlockableBy, whoseUnlockIsDue } from './views.ts';
export { lockWindowAsksChain, lockWindowReading, lockWindowVerdict, lockEventMissing, type LockWindowReading, type LockWindowVerdict } from './lock-window.ts';
export {
  DEFAULT_ORDER_TIMING, DEFAULT_RESERVATION_TTL_SECONDS, LOCK_WINDOW_RECHECK_MAX_SECONDS, LOCK_WINDOW_RECHECK_MIN_SECONDS, RESERVATION_CHAIN_MARGIN_SECONDS,
  depositTtlSeconds, lockDeadline, lookAgainAt, minLockExpirySeconds, reservationExpiry, unlockWindowEnd, type ReservationSettings,
} from './windows.ts';
export { depositRequestVerdict, type DepositRequestVerdict } from './deposit-request.ts';
export { reservationExpiryAsksChain, reservationExpiryVerdict, type DepositReading } from './expiry-veto.ts';
export { ledgerOperationsOf, movesAdBalances, type AdLedgerMove } from './ad-ledger.ts';
export { unreportedOnChain, type ChainDrift } from './unreported.ts';
export {
  endOf, followUpsAfter, followUpsOf, lookAgain, timerLooksAgain, type FollowUp, type LookAgainReason, type TradeDeadlines, type TradeFollowUp,
} from './follow-ups.ts';
export {
  DEFAULT_KEEPER_UNLOCK_AFTER_SECONDS, KEEPER_SEND_MARGIN_SECONDS, KEEPER_URGENT_BEFORE_SECONDS,
  keeperGraceSeconds, keeperStillOwes, keeperVerdict, keeperWindow,
  type KeeperDuty, type KeeperVerdict, type KeeperWindow,
} from './keeper-duties.ts';
