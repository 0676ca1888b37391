import { ApplicationFailure } from '@temporalio/client';
import * as chainErrors from '../../chains/errors.ts';
import { DomainError, type ErrorKind } from '../../domain/index.ts';
import * as proverErrors from '../../prover/errors.ts';
import * as lifecycleErrors from '../../trades/lifecycle/errors.ts';

/**
 * How domain errors cross Temporal and come back typed. An activity's error leaves the worker as an
 * ApplicationFailure whose `type` is the class name (what retry policies' nonRetryableErrorTypes
 * match) and whose details carry the error's own fields (`code`, `kind`, `retryable`, `field`, ...);
 * the client turns that failure back into an instance of the same class, so the API maps it exactly
 * as it maps the embedded orchestrator's errors.
 */

/** The fields of a domain error that travel in the failure's details. */
type ErrorFields = Record<string, unknown> & { code?: string; kind?: ErrorKind; retryable?: boolean; field?: string };

/** An error as the worker reports it: domain errors keep their class name and fields; `retryable: false` ones are final. */
export function toApplicationFailure(error: unknown): unknown {
  if (error instanceof ApplicationFailure || !(error instanceof Error)) return error;
  const fields: ErrorFields = { ...(error as unknown as ErrorFields) };
  const final = error instanceof DomainError ? !error.retryable : undefined;
  return ApplicationFailure.create({ type: error.name, message: error.message, details: [fields], nonRetryable: final, cause: error });
}

/** Wraps every function of `activities` so that what they throw leaves as `toApplicationFailure` says. */
export function reportingDomainErrors<T extends object>(activities: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    if (typeof fn !== 'function') continue;
    wrapped[name] = async (...args: unknown[]) => {
      try {
        return await (fn as (...a: unknown[]) => Promise<unknown>).apply(activities, args);
      } catch (error) {
        throw toApplicationFailure(error);
      }
    };
  }
  return wrapped as T;
}

/** A domain error whose class this process does not know: same code, kind and retryability. */
export class RemoteDomainError extends DomainError {
  readonly code: string;
  readonly kind: ErrorKind;
  override readonly retryable: boolean;
  constructor(type: string, message: string, fields: ErrorFields) {
    super(message, { field: fields.field });
    this.name = type;
    this.code = fields.code ?? type;
    this.kind = fields.kind ?? 'unavailable';
    this.retryable = fields.retryable ?? true;
  }
}

const KNOWN: Record<string, abstract new (...args: never[]) => Error> = Object.fromEntries(
  [chainErrors, lifecycleErrors, proverErrors].flatMap((m) => Object.entries(m)).filter(([, v]) => typeof v === 'function' && v.prototype instanceof Error),
) as Record<string, abstract new (...args: never[]) => Error>;

/** The typed error an ApplicationFailure stands for (its class when known here, else `RemoteDomainError`). */
export function fromApplicationFailure(failure: ApplicationFailure): Error {
  const type = failure.type ?? 'Error';
  const fields: ErrorFields = (failure.details?.[0] as ErrorFields | undefined) ?? {};
  const known = KNOWN[type];
  if (known) {
    // The class's own instance, its fields restored as they were (constructors differ; fields are plain data).
    const error = Object.assign(Object.create(known.prototype) as Error, fields);
    Object.defineProperty(error, 'message', { value: failure.message, enumerable: false, writable: true, configurable: true });
    Object.defineProperty(error, 'name', { value: type, enumerable: false, writable: true, configurable: true });
    Object.defineProperty(
      error,
      'stack',
      {
        value: `${type}: ${failure.message}\n    (reported by a Temporal worker)`,
        enumerable: false,
        writable: true,
        configurable: true,
      },
    );
    return error;
  }
  if (fields.kind) return new RemoteDomainError(type, failure.message, fields);
  const error = new Error(failure.message);
  error.name = type;
  return error;
}
