import { ApplicationFailure } from '@temporalio/client';
import { DomainError, type ErrorKind } from '../../domain/index.ts';

/**
 * How domain errors cross Temporal. An activity's error leaves the worker as an ApplicationFailure
 * whose `type` is the class name (what retry policies' nonRetryableErrorTypes match) and whose
 * details carry the error's own fields (`code`, `kind`, `retryable`, `field`, ...), so the workflow
 * history and the UI show what failed and whether it is retried. No answer to an API request comes
 * back through Temporal (a confirmation is applied by the use case), so nothing turns them back.
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
