import { DomainError } from '../domain/errors.ts';

/** The operator stopped signing (`npm run operator -- stop-signing`): no signed request leaves any api process. */
export class SigningStoppedError extends DomainError {
  readonly code = 'SIGNING_STOPPED';
  readonly kind = 'unavailable' as const;
  override readonly retryable = true;
  override readonly retryAfterSeconds = 60;

  constructor() {
    super('the operator has stopped signing: no signed request is issued until it is resumed; retry later');
  }
}
