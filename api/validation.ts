import type { z } from 'zod';
import { unprocessable } from './errors.ts';

/**
 * Turns zod issues into the spec's list of messages, each naming its field:
 * "limit must be between 1 and 100", "id must be a UUID". Schemas carry their own wording
 * (`{ error: '...' }`); this only prefixes the path.
 */
export function issuesToMessages(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'body';
    if (issue.code === 'unrecognized_keys') {
      return `${field === 'body' ? '' : `${field}: `}unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`;
    }
    if (issue.code === 'invalid_type' && issue.input === undefined) return `${field} is required`;
    return `${field} ${issue.message}`;
  });
}

/** Parses `input` with `schema` or throws a 422 naming every offending field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  // reportInput: without it zod 4 leaves `issue.input` undefined, and a wrongly typed field would read as missing.
  const result = schema.safeParse(input, { reportInput: true });
  if (!result.success) throw unprocessable(issuesToMessages(result.error.issues));
  return result.data;
}
