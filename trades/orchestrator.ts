import { DomainError } from '../domain/index.ts';
import type { ConfirmationKind, FollowUp, TradeEvent, TradeState } from './lifecycle/index.ts';

export type { ConfirmationKind } from './lifecycle/index.ts';

/**
 * The orchestrator (the Temporal frontend) cannot be reached: nothing was decided, retry later
 * (503). Declared with the port so that an orchestrator reports it importing nothing of trades but
 * the port and the lifecycle (the import rules).
 */
export class OrchestratorUnavailableError extends DomainError {
  readonly code = 'ORCHESTRATOR_UNAVAILABLE';
  readonly kind = 'unavailable';
  override readonly retryable = true;
}

/** A trade that may still move, with what an orchestrator carries out again after a restart (trades/resume.ts lists them). */
export interface ResumableTrade {
  tradeId: string;
  /** The machine's `resume` commands: the timer of its state armed, its proof run if unfinished. */
  followUps: FollowUp[];
}

/**
 * What the API asks of whoever drives trades (architecture.md "Processes"): start a trade's
 * lifecycle, deliver a confirmation and get its verdict, stop. Two implementations share the
 * machine (lifecycle/) and the activities (activities.ts): Temporal (`TEMPORAL_ADDRESS` set) and
 * the embedded pg-boss runner (the default). The API never runs lifecycle steps itself.
 */
export interface Orchestrator {
  /** Starts the trade's lifecycle (the machine's `start` commands: the reservation's timer). Idempotent. */
  startTrade(trade: StartedTrade): Promise<void>;
  /**
   * Verifies a reported transaction against the trade and applies it, answering synchronously:
   * resolves once applied (or already applied, same transaction: `duplicate`), throws the typed
   * errors of chains/ and trades/ otherwise (`NotFinalError`: retry later; a mismatch or a
   * transaction of the wrong kind: rejected, nothing changed). `trade` is the trade as the caller
   * read it, so the orchestrator reads it no more before the locked read of the database step.
   */
  confirm(trade: ConfirmingTrade, confirmation: Confirmation): Promise<AppliedEvent>;
  /** Stops taking work and waits for what runs in this process. */
  close(): Promise<void>;
}

export interface StartedTrade {
  tradeId: string;
  adId: string;
  routeId: string;
  /** When an undeposited reservation expires (TRADE_RESERVATION_TTL after creation). */
  reservationExpiresAt: Date;
  /** After this no lock can be placed (the order's lock deadline, chains/timing.ts). */
  lockDeadline: Date;
}

/** What a client reports: the deposit and the lock go through /confirm, the unlocks through /unlock/confirm. */
export interface Confirmation {
  kind: ConfirmationKind;
  txHash: string;
}

/** What verifying a trade's transactions needs to know of it (public: no secret), fixed at creation. */
export interface OrderFacts {
  orderHash: string;
  adChainId: string;
  orderChainId: string;
  /** The ad chain's AdManager (lock, ad-side unlock). */
  adManager: string;
  /** The order chain's OrderPortal (deposit, order-side unlock). */
  orderPortal: string;
  /** What the OrderPortal moves (deposit, order-side unlock), order token base units. */
  orderAmount: string;
  /** What the AdManager moves (lock, ad-side unlock), ad token base units. */
  adAmount: string;
}

/** The trade a confirmation is for: its id, its state as last read (the machine picks the awaited action from it), its order. */
export interface ConfirmingTrade {
  tradeId: string;
  state: TradeState;
  order: OrderFacts;
}

/** The machine event a verified transaction stands for, with the chain event that proves it. */
export interface VerifiedConfirmation {
  event: TradeEvent;
  chainEvent: ChainEventRef;
}

/** A verified chain event (chains/verify.ts VerifiedAction, the fields recorded). */
export interface ChainEventRef {
  chainId: string;
  txHash: string;
  logIndex: number;
  block: string;
  blockHash: string;
  event: string;
  args: Record<string, string>;
}

/** The stored trade after an event: its state and the commands the orchestrator must still run. */
export interface AppliedEvent {
  state: TradeState;
  /** Commands the orchestrator carries out after the database step (prove, arm and cancel timers); balance commands already ran. */
  followUps: FollowUp[];
  /** True when the event had already been applied (a repeated confirm): nothing changed. */
  duplicate: boolean;
  /**
   * True when a timer fired after the state it guarded was over (the machine's no-op), or was put
   * off (a lock window the chain has not closed: its next look is in `followUps`): nothing changed.
   */
  stale?: boolean;
  /** The event applied when it is not the one delivered: a lock window's timer that found the Maker's lock on chain applied LOCK_CONFIRMED. */
  appliedAs?: TradeEvent;
}

/**
 * The activities both orchestrators run (built by `createActivities(deps)` in activities.ts).
 * Each is idempotent on (trade id, step): Temporal retries them, the embedded runner replays them
 * after a crash.
 */
export interface TradeActivities {
  /**
   * Verifies a reported transaction as the action the machine awaits in `state` through the
   * confirmation's endpoint (lifecycle.ts `awaitedAction`), on that action's chain; a transaction
   * already recorded for the trade answers as its recorded action if it fits the endpoint
   * (`recordedActionFits`). Returns the event it stands for. Reads no trade.
   */
  verifyConfirmation(input: { tradeId: string; confirmation: Confirmation; state: TradeState; order: OrderFacts }): Promise<VerifiedConfirmation>;
  /** Applies `event` to the stored trade in one database transaction (machine + balance changes + event record). */
  applyEvent(input: { tradeId: string; event: TradeEvent; chainEvent?: ChainEventRef }): Promise<AppliedEvent>;
  /** Mirrors the deposit into the tree, proves and stores the verified proof. Heartbeats while proving (Temporal). */
  generateProof(input: { tradeId: string }): Promise<void>;
}
