import { DomainError } from '../domain/index.ts';

/**
 * Why a transaction a client reported does not (yet) prove what it should. Callers (the API, the
 * workflow) map these to HTTP statuses and retry decisions; `retryable` says whether asking again
 * later can succeed without the client doing anything.
 */
export abstract class ChainVerificationError extends DomainError {
  abstract readonly code:
    | 'TX_NOT_FOUND'
    | 'TX_FAILED'
    | 'WRONG_CONTRACT'
    | 'WRONG_EVENT'
    | 'NOT_FINAL'
    | 'RPC_UNAVAILABLE'
    | 'CHAIN_UNAVAILABLE'
    | 'CHAIN_FACTS_DISAGREE';
  abstract override readonly retryable: boolean;
}

/** The chain knows no such transaction (wrong hash, wrong chain, or dropped). */
export class TransactionNotFoundError extends ChainVerificationError {
  readonly kind = 'invalid';
  readonly code = 'TX_NOT_FOUND';
  override readonly retryable = false;
}

/** The transaction was included but reverted / failed. */
export class TransactionFailedError extends ChainVerificationError {
  readonly kind = 'invalid';
  readonly code = 'TX_FAILED';
  override readonly retryable = false;
}

/** The transaction called some other contract than the one the request was signed for. */
export class WrongContractError extends ChainVerificationError {
  readonly kind = 'invalid';
  readonly code = 'WRONG_CONTRACT';
  override readonly retryable = false;
}

/** The contract did not emit the expected event with the expected arguments (another call, another request). */
export class WrongEventError extends ChainVerificationError {
  readonly kind = 'invalid';
  readonly code = 'WRONG_EVENT';
  override readonly retryable = false;
}

/** Seen, but not yet final: pending, or fewer confirmations than the chain requires. Nothing should be recorded yet. */
export class NotFinalError extends ChainVerificationError {
  readonly kind = 'not_ready';
  readonly code = 'NOT_FINAL';
  override readonly retryable = true;
  constructor(
    message: string,
    /** Confirmations so far (0 while pending) and how many are required. */
    readonly confirmations: number,
    readonly required: number,
  ) {
    super(message);
  }
}

/** Throws `NotFinalError` unless the transaction has at least the chain's required confirmations. */
export function assertFinal(txHash: string, confirmations: number, required: number): void {
  if (confirmations < required) {
    throw new NotFinalError(`transaction ${txHash} has ${confirmations} of ${required} confirmations`, confirmations, required);
  }
}

/** The chain's RPC could not be reached or answered with an error: nothing is known about the transaction. */
export class RpcUnavailableError extends ChainVerificationError {
  readonly kind = 'unavailable';
  readonly code = 'RPC_UNAVAILABLE';
  override readonly retryable = true;
}

/**
 * Fewer of the chain's providers answer than its `rpcQuorum` (or the chain joins later): nothing is
 * known, nothing changes. Every process that needs a chain it cannot read answers with this one error
 * (503 `CHAIN_UNAVAILABLE` with `Retry-After`) and keeps serving everything else.
 */
export class ChainUnavailableError extends ChainVerificationError {
  readonly kind = 'unavailable';
  readonly code = 'CHAIN_UNAVAILABLE';
  override readonly retryable = true;
  override readonly retryAfterSeconds: number;
  constructor(message: string, options: { retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.retryAfterSeconds = options.retryAfterSeconds ?? 5;
  }
}

/**
 * The chain's providers gave different answers about a fact the books act on (a receipt, its events,
 * contract state, the portal's log) and no answer reached the quorum: it is not acted upon.
 */
export class ChainFactsDisagreeError extends ChainVerificationError {
  readonly kind = 'unavailable';
  readonly code = 'CHAIN_FACTS_DISAGREE';
  override readonly retryable = true;
  override readonly retryAfterSeconds = 10;
}
