import { DomainError } from '../domain/index.ts';

/** Use-case errors of trades; the lifecycle's own are in trades/lifecycle/errors.ts. */

/** The caller is not a party of the trade, or not the party the action is for. */
export class NotTradePartyError extends DomainError {
  readonly code = 'NOT_TRADE_PARTY';
  readonly kind = 'forbidden';
}

/** A field is valid on its own but not for this ad or route; `field` names it. */
export class TradeInputError extends DomainError {
  /** TRADE_INPUT, or a more specific code a client acts on (AMOUNT_BELOW_MINIMUM, ...; api/error-codes.ts). */
  readonly code: string;
  readonly kind = 'invalid';
  constructor(field: string, problem: string, options?: { code?: string }) {
    super(`${field} ${problem}`, { field });
    this.code = options?.code ?? 'TRADE_INPUT';
  }
}

/** The trade's state does not allow the action yet (or any more); the message says what is missing. */
export class TradeNotReadyError extends DomainError {
  readonly code = 'TRADE_NOT_READY';
  readonly kind = 'conflict';
}

/**
 * What the action needs is under way and will come without the caller doing anything (the proof,
 * the other party's confirmed unlock): 409 with Retry-After, ask again.
 */
export class TradeAwaitingError extends DomainError {
  readonly code = 'TRADE_AWAITING';
  readonly kind = 'not_ready';
  override readonly retryable = true;
}

/** The orchestrator cannot be reached (503): the port's own error, declared with it in orchestrator.ts. */
export { OrchestratorUnavailableError } from './orchestrator.ts';

/**
 * The wallet or the ad already has as many unfunded reservations open as allowed
 * (MAX_OPEN_RESERVATIONS_PER_WALLET, MAX_OPEN_RESERVATIONS_PER_AD); one frees itself when its
 * deposit is confirmed or its deposit request runs out.
 */
export class TooManyReservationsError extends DomainError {
  readonly code = 'TOO_MANY_RESERVATIONS';
  readonly kind = 'conflict';
}

/** The trade's deposit request ran out (its deadline passed, or the reservation expired): create a new trade. */
export class DepositRequestExpiredError extends DomainError {
  readonly code = 'DEPOSIT_REQUEST_EXPIRED';
  readonly kind = 'conflict';
}

/** The trade's deposit was already made: its deposit request is spent, nothing is left to send. */
export class TradeAlreadyDepositedError extends DomainError {
  readonly code = 'TRADE_ALREADY_DEPOSITED';
  readonly kind = 'conflict';
}
