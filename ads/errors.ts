import { DomainError } from '../domain/index.ts';

/** Domain errors of ad management; the API maps them by `kind`. */

export class AdNotFoundError extends DomainError {
  readonly code = 'AD_NOT_FOUND';
  readonly kind = 'not_found';
  constructor(adId: string) {
    super(`ad ${adId} not found`);
  }
}

/** The caller is signed in but is not the ad's creator (or has no wallet of the ad chain's kind). */
export class NotAdCreatorError extends DomainError {
  readonly code = 'NOT_AD_CREATOR';
  readonly kind = 'forbidden';
}

/** The ad's state forbids the action (closed, not yet confirmed, a close under way). */
export class AdStateError extends DomainError {
  readonly code = 'AD_STATE';
  readonly kind = 'conflict';
}

/** The ad's available balance cannot cover the amount asked for. */
export class InsufficientLiquidityError extends DomainError {
  readonly code = 'INSUFFICIENT_LIQUIDITY';
  readonly kind = 'conflict';
}

/**
 * The caller already has as many PENDING ads, or unsettled ad requests, as one user may
 * (MAX_PENDING_ADS_PER_USER, MAX_OPEN_AD_REQUESTS_PER_USER): 429 naming the limit, with
 * `Retry-After` the seconds until the oldest of them leaves its confirmation window.
 */
export class AdRequestLimitError extends DomainError {
  readonly code = 'AD_REQUEST_LIMIT';
  readonly kind = 'limited';
  override readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** A field is valid on its own but not for this ad or route; `field` names it. */
export class AdInputError extends DomainError {
  /** AD_INPUT, or a more specific code a client acts on (RECIPIENT_CANNOT_RECEIVE; api/error-codes.ts). */
  readonly code: string;
  readonly kind = 'invalid';
  constructor(field: string, problem: string, options?: { code?: string }) {
    super(`${field} ${problem}`, { field });
    this.code = options?.code ?? 'AD_INPUT';
  }
}

/** The reported transaction answers no confirmable request of this ad. */
export class TransactionMismatchError extends DomainError {
  readonly code = 'TX_MISMATCH';
  readonly kind = 'invalid';
  constructor(problem: string) {
    super(`txHash ${problem}`, { field: 'txHash' });
  }
}

/** A chain cannot be read (not registered, no RPC configured, fewer providers than its quorum): one error for every caller. */
export { ChainUnavailableError } from '../chains/errors.ts';

/** A read that shows only the caller's own ads (their pending ones) was asked without a valid access token. */
export class OwnReadNeedsSignInError extends DomainError {
  readonly code = 'UNAUTHENTICATED';
  readonly kind = 'unauthenticated';
}
