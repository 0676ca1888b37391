import { CHAIN_KINDS, DECIMAL_INTEGER, MAX_UINT256, UUID_PATTERN } from '../../domain/index.ts';
import { ERROR_CODE_LIST, type ErrorCode } from '../error-codes.ts';
import { z } from '../openapi/operations.ts';

/**
 * Request and response building blocks shared by every router. Each carries the wording of its
 * validation message, so a 422 reads "id must be a UUID", "limit must be between 1 and 100".
 * Every request string starts from `text`: none may carry a NUL byte (PostgreSQL's text refuses it,
 * which used to surface as a 500) or a lone UTF-16 surrogate (not Unicode; it would be stored as U+FFFD).
 */

/** An unpaired high or low surrogate code unit. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** True when `value` is a string PostgreSQL and JSON can carry unchanged: no NUL, no lone surrogate. */
export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}

/**
 * A request string: rejects NUL bytes and lone surrogates first (and stops there), so later checks
 * and the database only ever see well-formed text. `error` is the wording for a non-string.
 */
export const text = (error = 'must be a string') =>
  z.string({ error }).refine(isStorableText, { error: 'must not contain NUL bytes or unpaired surrogates', abort: true });

export const uuid = text('must be a UUID')
  .regex(UUID_PATTERN, { error: 'must be a UUID' })
  .transform((value) => value.toLowerCase())
  .openapi({ type: 'string', format: 'uuid', pattern: UUID_PATTERN.source.replaceAll('a-f', 'a-fA-F'), example: '0b5a4f8e-2c1d-4d7e-9a3b-6f1e2d3c4b5a' });

/** A non-negative integer amount in the token's smallest unit, as a decimal string. */
export const amount = text('must be a non-negative integer decimal string')
  .regex(DECIMAL_INTEGER, { error: 'must be a non-negative integer decimal string without sign, decimals or leading zeros', abort: true })
  // zod runs refinements even after a failed check unless aborted; guard anyway, BigInt throws on junk.
  .refine((value) => DECIMAL_INTEGER.test(value) && value.length <= 78 && BigInt(value) <= MAX_UINT256, { error: 'must fit in 256 bits' })
  .openapi({
    pattern: DECIMAL_INTEGER.source,
    maxLength: 78,
    example: '1000000000000000000',
    description: 'Amount in the smallest unit, decimal string (at most 2^256 - 1).',
  });

/** Addresses the document describes: an EVM address, or a Stellar account (G...) or contract (C...) strkey. */
export const ADDRESS_PATTERN = '^(0x[0-9a-fA-F]{40}|[GC][A-Z2-7]{55})$';

/**
 * An address field of a request. The pattern is the document's; which kind the field needs (the ad
 * chain's or the order chain's) and the checksum are checked by the use case, which answers 422
 * naming the field.
 */
export const address = (description: string, example = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8') =>
  shortText(128).openapi({ pattern: ADDRESS_PATTERN, description, example });

/** A public numeric chain id as a string. */
export const chainId = text('must be a numeric chain ID string')
  .regex(/^[0-9]{1,78}$/, { error: 'must be a numeric chain ID string' })
  .openapi({ pattern: '^[0-9]{1,78}$', example: '31337' });

export const chainKind = z.enum(CHAIN_KINDS, { error: `must be ${CHAIN_KINDS.join(' or ')}` });

/** A short free-text filter (names, symbols, addresses): bounded so nothing huge reaches the database. */
export const shortText = (max = 128) =>
  text().min(1, { error: 'must not be empty' }).max(max, { error: `must be at most ${max} characters` });

export const limit = text('must be an integer between 1 and 100')
  .regex(/^[0-9]{1,3}$/, { error: 'must be an integer between 1 and 100', abort: true })
  .transform(Number)
  .refine((value) => value >= 1 && value <= 100, { error: 'must be between 1 and 100' })
  .optional()
  .openapi({ type: 'integer', minimum: 1, maximum: 100, default: 25, description: 'Page size, default 25.' });

export const cursor = text('must be a cursor string')
  .max(512, { error: 'is not a cursor this service issued' })
  .optional()
  .openapi({ description: 'Opaque: pass back the nextCursor of the previous page.' });

/**
 * Response fields, described with the request patterns: what the service writes is what it would
 * accept back, and clients (and schemathesis's response checks) can rely on the shape.
 * An amount: a decimal string in the smallest unit (at most 2^256 - 1).
 */
export const amountOut = z.string().openapi({ pattern: DECIMAL_INTEGER.source, maxLength: 78, example: '1000000000000000000' });
/** A public numeric chain id, as a string. */
export const chainIdOut = z.string().openapi({ pattern: '^[0-9]{1,78}$', example: '31337' });
/** A wallet or contract address: EVM (0x, 20 bytes), a Stellar account (G...) or contract (C...). */
export const addressOut = z.string().openapi({ pattern: ADDRESS_PATTERN });

export const timestamp = z.string().openapi({ format: 'date-time', example: '2026-11-22T10:00:00.000Z' });

export const errorBodySchema = z
  .object({
    statusCode: z.number().int().openapi({ example: 422 }),
    message: z.union([z.string(), z.array(z.string())]).openapi({ example: ['limit must be between 1 and 100'] }),
    error: z.string().openapi({ example: 'Unprocessable Entity' }),
    code: z.enum(ERROR_CODE_LIST as [ErrorCode, ...ErrorCode[]]).openapi({
      description: 'A stable machine code for the failure (docs/api.md lists each with its status and meaning); branch on it, not on `message`.',
      example: 'VALIDATION_FAILED',
    }),
    retryable: z.boolean().openapi({
      description: 'True when the same request, sent again unchanged (under the same Idempotency-Key), may succeed later ' +
        '(after Retry-After where given): every 429 and 503, a 500, and the 409s that mean "not yet" (NOT_FINAL, ' +
        'TRADE_AWAITING, IDEMPOTENCY_KEY_IN_USE). False when the request or the state must change first.',
      example: false,
    }),
  })
  .openapi('Error');

/** `{ data, nextCursor }` for a list of `item`. */
export const page = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), nextCursor: z.string().nullable() });

/** Standard error responses for the OpenAPI document, keyed by status. */
/** What each error status means, for the document. */
export const ERROR_DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'Malformed request: JSON that does not parse, a malformed percent-encoding in the path, or contradictory filters',
  401: 'Missing, malformed or expired access token',
  403: 'Not allowed for this caller',
  404: 'No such resource',
  409: 'Conflicts with the current state',
  413: 'Body too large (BODY_LIMIT)',
  415: 'Body is not JSON: Content-Type must be application/json',
  422: 'Validation failed; message lists each offending field',
  429: 'Rate limit exceeded; retry with exponential backoff',
  500: 'Unexpected failure (a bug, logged with the request id); the body says nothing more',
  503: 'A dependency is unavailable (PostgreSQL, or the RPC of a chain the operation reads); retry after Retry-After',
};

/** Standard error responses for the OpenAPI document, keyed by status. */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      { description: ERROR_DESCRIPTIONS[status] ?? 'Error', content: { 'application/json': { schema: errorBodySchema } } },
    ]),
  );
}
