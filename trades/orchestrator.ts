import type { TradeCommand, TradeEvent, TradeState } from './lifecycle.ts';

/**
 * What the API asks of whoever drives trades (architecture.md "Processes"): start a trade's
 * lifecycle, deliver a confirmation and get its verdict, stop. Two implementations share the
 * machine (machine.ts) and the activities (activities.ts): Temporal (`TEMPORAL_ADDRESS` set) and
 * the embedded pg-boss runner (the default). The API never runs lifecycle steps itself.
 */
export interface Orchestrator {
  /** Starts the trade's lifecycle: from now on its reservation runs out at `reservationExpiresAt`. Idempotent. */
  startTrade(trade: StartedTrade): Promise<void>;
  /**
   * Verifies a reported transaction against the trade and applies it, answering synchronously:
   * resolves once applied (or already applied, same transaction), throws the typed errors of
   * chains/ and trades/ otherwise (`NotFinalError`: retry later; a mismatch: rejected, nothing changed).
   */
  confirm(tradeId: string, confirmation: Confirmation): Promise<AppliedEvent>;
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
export type ConfirmationKind = 'deposit-or-lock' | 'unlock';

export interface Confirmation {
  kind: ConfirmationKind;
  txHash: string;
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
  /** Commands the orchestrator carries out after the database step (`PROVE`); database commands already ran. */
  followUps: TradeCommand[];
  /** True when the event had already been applied (a repeated confirm): nothing changed. */
  duplicate: boolean;
}

/**
 * The activities both orchestrators run (built by `createActivities(deps)` in activities.ts).
 * Each is idempotent on (trade id, step): Temporal retries them, the embedded runner replays them
 * after a crash.
 */
export interface TradeActivities {
  /** Verifies a reported transaction for the trade on the right chain; returns the event it stands for. */
  verifyConfirmation(input: { tradeId: string; confirmation: Confirmation }): Promise<VerifiedConfirmation>;
  /** Applies `event` to the stored trade in one database transaction (machine + balance changes + event record). */
  applyEvent(input: { tradeId: string; event: TradeEvent; chainEvent?: ChainEventRef }): Promise<AppliedEvent>;
  /** Mirrors the deposit into the tree, proves and stores the verified proof. Heartbeats while proving (Temporal). */
  generateProof(input: { tradeId: string }): Promise<void>;
}
