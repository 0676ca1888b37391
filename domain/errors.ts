/**
 * What a failed use case means to its caller, independent of transport. The API's one error
 * middleware maps each kind to an HTTP status; a workflow maps `retryable` to its retry policy.
 */
export type ErrorKind =
  | 'invalid' // the input is wrong: 422 naming the field
  | 'unauthenticated' // no or bad credentials: 401
  | 'forbidden' // authenticated, but not allowed: 403
  | 'not_found' // 404
  | 'conflict' // the current state forbids it: 409
  | 'not_ready' // not yet: the same request later can succeed (e.g. a transaction not final): 409, retryable
  | 'limited' // the caller is over a per-user limit of things in progress; retry once some end: 429
  | 'unavailable'; // a dependency is down: 503, retryable

/**
 * Base of every domain error: a stable `code` for clients and logs, a `kind` for mapping, and
 * `retryable` (asking again later, unchanged, can succeed). `field` names the culprit of an
 * `invalid` error.
 */
export abstract class DomainError extends Error {
  abstract readonly code: string;
  abstract readonly kind: ErrorKind;
  readonly retryable: boolean = false;
  readonly field?: string;
  /** When asking again may succeed, seconds from now (the API's `Retry-After`; 2 when unset and retryable). */
  readonly retryAfterSeconds?: number;

  constructor(message: string, options?: { cause?: unknown; field?: string }) {
    super(message, options);
    this.name = new.target.name;
    if (options?.field) this.field = options.field;
  }
}
