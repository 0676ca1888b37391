import { DomainError } from '../domain/index.ts';

/** A registration field that is not allowed (`field` names it): 422. */
export class WebhookInputError extends DomainError {
  readonly code = 'WEBHOOK_INPUT';
  readonly kind = 'invalid';
  constructor(field: string, problem: string) {
    super(`${field} ${problem}`, { field });
  }
}

/** No such endpoint, or not the caller's (a stranger learns nothing): 404. */
export class WebhookNotFoundError extends DomainError {
  readonly code = 'WEBHOOK_NOT_FOUND';
  readonly kind = 'not_found';
  constructor(id: string) {
    super(`webhook ${id} not found`);
  }
}

/** The caller already has as many endpoints as allowed: 409. */
export class WebhookLimitError extends DomainError {
  readonly code = 'WEBHOOK_LIMIT';
  readonly kind = 'conflict';
}
