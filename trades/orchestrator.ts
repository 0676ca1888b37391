import type { Knex } from 'knex';
import type { TransactionSender } from '../domain/trade-steps.ts';
import { DomainError } from '../domain/index.ts';
import type { ChainEventRecord } from '../db/repositories/chain-events.ts';
import type { TradeLifecycleRecord } from '../db/repositories/trade-lifecycle.ts';
import type { ConfirmationKind, FollowUp, TradeEvent, TradeFollowUp, TradeState } from './lifecycle/index.ts';

export type { ConfirmationKind, TradeFollowUp } from './lifecycle/index.ts';

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
 * An open trade as the database holds it, with what a fresh run of its lifecycle must carry out to
 * pick it up where the database says it is (its state's timer, its proof if unfinished): what an
 * orchestrator that lost a trade's lifecycle (a restored database) resumes it from.
 */
export interface RestorableTrade {
  trade: StartedTrade;
  state: TradeState;
  followUps: FollowUp[];
}

/**
 * What the use cases ask of whoever drives trades (docs/design.md "One machine, one transaction"):
 * start a trade's lifecycle, carry out the follow-ups of an event applied outside it, stop. It
 * decides nothing and is never the gateway of a confirmation: a confirmation is verified and applied
 * by the use case (`TradeActivities.applyEvent`, one transaction that writes the follow-ups to the
 * outbox), then handed here. Two implementations: Temporal (`TEMPORAL_ADDRESS` set: one workflow per
 * trade, signalled) and the embedded pg-boss runner (the default: jobs).
 */
export interface Orchestrator {
  /** Starts the trade's lifecycle (the machine's `start` commands: the reservation's timer). Idempotent. */
  startTrade(trade: StartedTrade): Promise<void>;
  /**
   * Carries out (or hands to the trade's workflow) the follow-ups of an event applied outside the
   * orchestrator, and marks their outbox rows (`applied.outbox`) carried out. Idempotent: arming a
   * timer twice arms one, a proof asked twice runs once. A trade the orchestrator does not know yet
   * (its start failed) throws; rows it could not take stay pending for the next sweep.
   */
  carryOut(trade: StartedTrade, applied: AppliedEvent): Promise<void>;
  /**
   * When the orchestrator's work lives in the service's PostgreSQL (the embedded runner's jobs):
   * carries out `followUps` inside the transaction that applies their event, so they take effect
   * exactly when it commits, with no outbox round trip after it. The applier then marks the event
   * `carriedWithin`, and `carryOut` only wakes this process's workers for it.
   */
  carryOutWithin?: FollowUpsWithin;
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

/** The trade a confirmation is for: its id, its state as read (the machine picks the awaited action from it), its order. */
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
  /** Who sent the transaction: the party that reported it, or the relayer's keeper (recorded with the event). */
  sentBy?: TransactionSender;
  /**
   * The event was already recorded for this trade (a repeated confirmation): its arguments are not
   * read again, and the repeat is judged on the trade's current, locked row (the machine calls it a
   * duplicate), never on a state read before the first confirmation committed.
   */
  recorded?: true;
}

/** Carries out a trade's follow-ups inside `trx` (`Orchestrator.carryOutWithin`). */
export type FollowUpsWithin = (trx: Knex.Transaction, tradeId: string, followUps: readonly TradeFollowUp[]) => Promise<void>;

/** The stored trade after an event: its state and the commands the orchestrator must still run. */
export interface AppliedEvent {
  state: TradeState;
  /** What the orchestrator carries out after the database step (prove, arm and cancel timers, the end); balance commands already ran. */
  followUps: TradeFollowUp[];
  /** The outbox rows of `followUps` still to be carried out (their `seq`), for `Orchestrator.carryOut`; empty when they travel with the result. */
  outbox?: number[];
  /** The follow-ups were carried out inside the event's own transaction (`Orchestrator.carryOutWithin`): only this process's workers are still to be woken. */
  carriedWithin?: true;
  /** True when the event had already been applied (a repeated confirm): nothing changed. */
  duplicate: boolean;
  /**
   * True when a timer fired after the state it guarded was over (the machine's no-op), or was put
   * off (a lock window the chain has not closed: its next look is in `followUps`): nothing changed.
   */
  stale?: boolean;
  /** The event applied when it is not the one delivered: a lock window's timer that found the Maker's lock on chain applied LOCK_CONFIRMED. */
  appliedAs?: TradeEvent;
  /**
   * PROOF_READY as the prove step applied it: seconds from the deposit's recording (the database's clock,
   * read with the trade) to the proof's commit, for the deposit-to-proof metric (no read of its own).
   */
  depositToProofSeconds?: number;
}

/**
 * The lifecycle steps (built by `createActivities(deps)` in activities.ts), used by the use cases
 * and both orchestrators. Each is idempotent on (trade id, step): Temporal retries them, the
 * embedded runner replays them after a crash.
 */
export interface TradeActivities {
  /**
   * Verifies a reported transaction as the action the machine awaits in `state` through the
   * confirmation's endpoint (lifecycle.ts `awaitedAction`), on that action's chain; a transaction
   * already recorded for the trade answers as its recorded action if it fits the endpoint
   * (`recordedActionFits`). Returns the event it stands for. Reads no trade. `recorded`: the trade's
   * events recorded in the transaction when the caller read them with the trade (then not read again).
   */
  verifyConfirmation(input: {
    tradeId: string; confirmation: Confirmation; state: TradeState; order: OrderFacts; recorded?: readonly ChainEventRecord[];
  }): Promise<VerifiedConfirmation>;
  /**
   * Applies `event` to the stored trade in one database transaction: the machine, the books, the
   * chain event, the pushed events and the follow-ups (outbox). `read`: the trade as the caller read
   * it without a lock (a confirmation): then the row is not read again but written only if its
   * state is still the one read (else it is locked, read and the machine run again). `carriedOut`:
   * the follow-ups travel back with the result to the orchestrator that asked (a Temporal
   * activity), so their rows are written carried out.
   */
  applyEvent(
    input: {
      tradeId: string;
      event: TradeEvent;
      chainEvent?: ChainEventRef;
      read?: TradeLifecycleRecord;
      carriedOut?: boolean;
    },
  ): Promise<AppliedEvent>;
  /**
   * Mirrors the deposit into the tree, proves, and stores the verified proof with PROOF_READY in one
   * transaction (a proof already stored answers as a duplicate with the trade's `resume`
   * follow-ups). Heartbeats while proving (Temporal).
   */
  generateProof(input: { tradeId: string; carriedOut?: boolean }): Promise<AppliedEvent>;
}

/** The follow-ups outbox as an orchestrator sees it (trades/follow-up-outbox.ts over db/repositories/trade-follow-ups.ts). */
export interface FollowUpOutbox {
  /** Rows still pending at least `olderThanMs` after they were written (their process stopped before carrying them out), oldest first. */
  pending(olderThanMs: number): Promise<Array<{ seq: number; tradeId: string; followUp: TradeFollowUp; trade: StartedTrade }>>;
  /** Marks rows carried out. */
  markCarriedOut(seqs: readonly number[]): Promise<void>;
}
