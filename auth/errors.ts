import { DomainError } from '../domain/index.ts';

/** Domain errors of sign-in; the API's error middleware maps them by `kind`. */

/** The proof of wallet ownership or the token does not hold: bad signature, unknown/used/expired challenge, bad token. */
export class SignInRejected extends DomainError {
  /** SIGN_IN_REJECTED, or TOKEN_EXPIRED when only the token's lifetime is over (refresh, or sign in again). */
  readonly code: string;
  readonly kind = 'unauthenticated';
  constructor(message: string, options?: { code?: 'TOKEN_EXPIRED' }) {
    super(message);
    this.code = options?.code ?? 'SIGN_IN_REJECTED';
  }
}

/** The request is malformed in a way only sign-in can tell (e.g. not an EIP-4361 text); `field` names the culprit. */
export class SignInInputError extends DomainError {
  readonly code = 'SIGN_IN_INPUT';
  readonly kind = 'invalid';
  constructor(field: string, problem: string) {
    super(`${field} ${problem}`, { field });
  }
}

/** A link that would break a wallet rule: chain kind already linked, or address owned by another user. */
export class WalletConflict extends DomainError {
  readonly code = 'WALLET_CONFLICT';
  readonly kind = 'conflict';
}
