/**
 * Domain errors of sign-in. The HTTP layer maps them: `SignInRejected` -> 401,
 * `SignInInputError` -> 422 naming its field, `WalletConflict` -> 409.
 */

/** The proof of wallet ownership or the token does not hold: bad signature, unknown/used/expired challenge, bad token. */
export class SignInRejected extends Error {}

/** The request is malformed in a way only sign-in can tell (e.g. not an EIP-4361 text); `field` names the culprit. */
export class SignInInputError extends Error {
  constructor(readonly field: string, problem: string) {
    super(`${field} ${problem}`);
  }
}

/** A link that would break a wallet rule: chain kind already linked, or address owned by another user. */
export class WalletConflict extends Error {}
