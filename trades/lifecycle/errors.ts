import { DomainError } from '../../domain/index.ts';

/** Errors of the trade lifecycle; the API maps them by `kind`, Temporal's retry policy by `retryable`. */

export class TradeNotFoundError extends DomainError {
  readonly code = 'TRADE_NOT_FOUND';
  readonly kind = 'not_found';
  constructor(tradeId: string) {
    super(`trade ${tradeId} not found`);
  }
}

/** The trade's state does not admit the event (e.g. a deposit after the reservation expired). */
export class TradeStateError extends DomainError {
  readonly code = 'TRADE_STATE';
  readonly kind = 'conflict';
}

/** The reported transaction is not this trade's (another trade's, or no matching event). */
export class TradeTransactionMismatchError extends DomainError {
  readonly code = 'TRADE_TX_MISMATCH';
  readonly kind = 'invalid';
  constructor(problem: string) {
    super(`txHash ${problem}`, { field: 'txHash' });
  }
}

/** The mirrored tree disagrees with the portal, or a chain is not reachable: try again later. */
export class TreeOutOfSyncError extends DomainError {
  readonly code = 'TREE_OUT_OF_SYNC';
  readonly kind = 'unavailable';
  override readonly retryable = true;
}

/** Codes of the errors no retry can fix (Temporal's nonRetryableErrorTypes use the class names). */
export const NON_RETRYABLE_ERRORS = [
  'TradeNotFoundError', 'TradeStateError', 'TradeTransactionMismatchError',
  'TransactionNotFoundError', 'TransactionFailedError', 'WrongContractError', 'WrongEventError', 'InvalidProofInputError',
] as const;
