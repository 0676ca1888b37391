import { OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { genericCode } from '../error-codes.ts';
import { operationErrorCodes } from '../routes/operation-errors.ts';
import { ERROR_DESCRIPTIONS } from '../schemas/common.ts';
import { RESPONSE_EXAMPLES } from './examples.ts';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_PATTERN, isIdempotentOperation, REPLAYED_HEADER } from '../middleware/idempotency.ts';
import { markResponseEnumsOpen } from './open-enums.ts';
import { toOpenApi30 } from './openapi-30.ts';
import { registry } from './operations.ts';

let cached: object | undefined;
let cached30: object | undefined;

/** The tags operations use, described once (linters want every tag declared). */
const TAGS = [
  { name: 'Auth', description: 'Sign-in with a wallet (SIWE on EVM, SEP-10 on Stellar), sessions and tokens.' },
  { name: 'Chains', description: 'Chains of the registry (read-only).' },
  { name: 'Routes', description: 'Token pairs across two chains (read-only).' },
  { name: 'Ads', description: "Makers' liquidity: create, fund, withdraw, close, update; public reads." },
  { name: 'Trades', description: "Bridgers' trades against ads, from the deposit to both unlocks; public reads." },
  { name: 'Events', description: 'Trade and account status pushed as server-sent events.' },
  { name: 'Webhooks', description: "Makers' bots notified of their ads' and trades' events." },
  { name: 'System', description: 'Health, documentation, metrics.' },
];

const METHODS_WITH_BODY = new Set(['post', 'put', 'patch', 'delete']);
/**
 * The only operations that never reach PostgreSQL (nor a chain): every other one may answer 503
 * while the database is down (api/database-outage.test.ts), the sign-in ones through their
 * rate-limit counters too. /metrics serves from memory what was read on a schedule (the trade
 * gauges, trades/observation/gauges.ts), so it answers 200 in an outage.
 */
const WITHOUT_DEPENDENCIES = new Set(['/docs', '/openapi.json', '/docs/openapi-3.0.json', '/metrics', '/.well-known/stellar.toml']);
/** Public reads that answer 304 to a matching If-None-Match (api/http-cache.ts). */
const REVALIDATED = new Set(['/v1/ads', '/v1/ads/{id}', '/v1/trades/all', '/v1/trades/{id}']);

type Operation = {
  operationId?: string;
  security?: unknown[];
  parameters?: { in: string; required?: boolean; name: string; example?: unknown; schema?: { example?: unknown } }[];
  requestBody?: { required?: boolean };
  responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: unknown; 'x-error-codes'?: string[] }>;
};

const header = (description: string, schema: object = { type: 'string' }) => ({ description, schema });
const RETRY_AFTER = { 'Retry-After': header('Seconds to wait before asking again.', { type: 'integer', minimum: 0 }) };
const RATE_LIMIT = {
  RateLimit: header('IETF draft 8: the remaining budget, `"<policy>"; r=<remaining>; t=<seconds to reset>`.'),
  'RateLimit-Policy': header('IETF draft 8: the policy, `"<policy>"; q=<limit>; w=<window seconds>`.'),
};

/**
 * What every operation answers besides its own responses, written once instead of on each
 * registration (so an endpoint added later is described the same way):
 * - `security: []` on public operations (no token), unless they declare their own;
 * - bodies required wherever an operation takes one;
 * - optional query parameters without examples, so "Try it out" on /docs does not pre-fill filters;
 * - 400 (malformed request), 429 (rate limited, with Retry-After) and 500 on every operation;
 *   413 and 415 where a body is read; 503 wherever a dependency is read; 304 on the revalidated
 *   public reads; Retry-After on 409 and 503.
 */
function completeOperation(path: string, method: string, operation: Operation): void {
  operation.security ??= [];
  if (operation.requestBody) operation.requestBody.required = true;
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in !== 'query' || parameter.required) continue;
    delete parameter.example;
    if (parameter.schema) delete parameter.schema.example;
  }
  const statuses = [400, 429, 500, ...(METHODS_WITH_BODY.has(method) ? [413, 415] : []), ...(WITHOUT_DEPENDENCIES.has(path) ? [] : [503])];
  for (const status of statuses) {
    // After generation: the error body by reference to the Error schema the registrations produced.
    operation.responses[status] ??= {
      description: ERROR_DESCRIPTIONS[status]!,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  if (REVALIDATED.has(path)) {
    operation.parameters = [
      ...(operation.parameters ?? []),
      {
        in: 'header',
        name: 'If-None-Match',
        required: false,
        schema: { type: 'string' } as never,
        description: 'The ETag of a copy you hold: 304 when it is still current.',
      } as never,
    ];
    operation.responses['304'] ??= { description: 'Not modified: the copy whose ETag was sent is current (no body).' };
    const ok = operation.responses['200'];
    if (ok) ok.headers = {
      ...ok.headers,
      ETag: header('Weak validator of this representation.'),
      'Cache-Control': header('`public, max-age=5`; `private, no-store` for a caller\'s own pending ads.'),
    };
  }
  const words = path.replace(/\{([^}]+)\}/g, 'By-$1').split(/[^A-Za-z0-9]+/);
  operation.operationId ??= `${method}${words.map((part) => part.charAt(0).toUpperCase() + part.slice(1)).join('')}`;
  if (isIdempotentOperation(method, path)) describeIdempotencyKey(operation);
  listErrorCodes(path, method, operation);
  for (const status of ['409', '429', '503']) {
    const response = operation.responses[status];
    if (response) response.headers = { ...response.headers, ...RETRY_AFTER, ...(status === '429' ? RATE_LIMIT : {}) };
  }
}

/**
 * Each error response lists the codes the operation can answer with its status (`x-error-codes`,
 * from api/routes/operation-errors.ts), and a status one of them needs is described if the
 * registration did not; an error response no specific code explains carries its status's generic code.
 * The main operations' success responses get an example body (examples.ts).
 */
function listErrorCodes(path: string, method: string, operation: Operation): void {
  const kind = {
    readsBody: METHODS_WITH_BODY.has(method),
    readsDependency: !WITHOUT_DEPENDENCIES.has(path),
    // Required: some requirement names it and none is empty (an empty one makes the token optional).
    bearer: (operation.security ?? []).some((requirement) => Object.hasOwn(requirement as object, 'bearerAuth'))
      && !(operation.security ?? []).some((requirement) => Object.keys(requirement as object).length === 0),
    idempotent: isIdempotentOperation(method, path),
    validated: Boolean(operation.requestBody) || (operation.parameters ?? []).some((parameter) => parameter.in === 'path' || parameter.in === 'query'),
  };
  const byStatus = operationErrorCodes(operation.operationId!, kind);
  for (const [status, codes] of byStatus) {
    operation.responses[status] ??= {
      description: ERROR_DESCRIPTIONS[status]!,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
    operation.responses[status]['x-error-codes'] = codes;
  }
  for (const [status, response] of Object.entries(operation.responses)) {
    if (Number(status) >= 400 && !response['x-error-codes']) response['x-error-codes'] = [genericCode(Number(status))];
  }
  const example = RESPONSE_EXAMPLES[operation.operationId!];
  const ok = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))?.[1];
  const json = (ok?.content as Record<string, { example?: unknown }> | undefined)?.['application/json'];
  if (example && json) json.example = example;
}

/**
 * The Idempotency-Key header, its 409 (first request still running), 422 (bad key, key of another
 * request) and 429 (too many keys held), and the replay marker.
 */
function describeIdempotencyKey(operation: Operation): void {
  operation.parameters = [
    ...(operation.parameters ?? []),
    {
      in: 'header', name: IDEMPOTENCY_HEADER, required: false,
      schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN, maxLength: 255, example: '8e03978e-40d5-43e8-bc93-6894a57f9324' } as never,
      description: 'Makes a retry safe: the same key from the same user with the same request (method, path, body) ' +
        'within 24 hours gets the first answer again (with `Idempotent-Replayed: true`) and nothing runs twice. ' +
        'Another request under a used key is 422 naming Idempotency-Key; a retry while the first request still runs ' +
        'waits for its answer (up to IDEMPOTENCY_WAIT_SECONDS), then 409 with Retry-After. A first request that ' +
        'stopped before its answer was stored is abandoned after 2 minutes: a confirm runs again (its txHash is a ' +
        'duplicate), any other operation is 409 IDEMPOTENCY_KEY_IN_USE until the key expires (its effect may be ' +
        'committed: look for it, e.g. GET /v1/trades/all?orderHash=). Only successful answers (2xx) are kept: a ' +
        'refused request changed nothing, and its retry with the same key runs again. A user holds at most ' +
        'MAX_IDEMPOTENCY_KEYS_PER_USER keys (1,000 by default) of the last 24 hours: a new key past that is 429 ' +
        'IDEMPOTENCY_KEYS_EXHAUSTED with Retry-After (when the oldest expires); a key already held still replays. ' +
        '1 to 255 characters of letters, digits and -._~+/=:, bare or in double quotes.',
    } as never,
  ];
  const error = (status: number) => ({
    description: ERROR_DESCRIPTIONS[status]!,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
  operation.responses['409'] ??= error(409);
  operation.responses['422'] ??= error(422);
  const limited = operation.responses['429'] ??= error(429);
  limited.description += '; or (IDEMPOTENCY_KEYS_EXHAUSTED) the caller holds MAX_IDEMPOTENCY_KEYS_PER_USER Idempotency-Keys: ' +
    'retry after Retry-After, or without the header';
  for (const [status, response] of Object.entries(operation.responses)) {
    // Only successes are stored and replayed.
    if (status.startsWith('2')) response.headers = {
      ...response.headers,
      [REPLAYED_HEADER]: header(
        '`true` when this is the stored answer to an earlier request with the same Idempotency-Key.',
        { type: 'string', enum: ['true'] },
      ),
    };
  }
}

/** The OpenAPI 3.1 document of every endpoint, generated once from the registered zod schemas. */
export function openApiDocument(): object {
  if (cached) return cached;
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Cross-Chain Liquidity Relayer API',
      version: '1.0.0',
      description:
        'Makers advertise liquidity on routes between EVM and Stellar chains; Bridgers trade against those ads; ' +
        'settlement is unlocked on both chains by a Groth16 proof of deposit inclusion. Amounts are decimal strings ' +
        'in the smallest unit. Errors share one body: `{statusCode, message, error, code, retryable}`; validation failures (422) list ' +
        'each offending field. Request bodies are JSON objects (`Content-Type: application/json`; others 415). A known ' +
        'path asked with a method it does not list answers 405 with `Allow`; an unknown path 404. Every response ' +
        'carries the `RateLimit` and `RateLimit-Policy` headers.',
    },
    servers: [{ url: '/' }],
    tags: TAGS,
  });
  const declared = new Set(TAGS.map((tag) => tag.name));
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item as Record<string, Operation & { tags?: string[] }>)) {
      completeOperation(path, method, operation);
      // A tag nobody described yet is still declared, so the document stays valid for every linter.
      for (const tag of operation.tags ?? []) {
        if (!declared.has(tag)) document.tags!.push({ name: tag });
        declared.add(tag);
      }
    }
  }
  // Webhooks (requests this service sends): named and marked as needing no token of ours.
  for (const [name, item] of Object.entries((document as { webhooks?: Record<string, Record<string, Operation>> }).webhooks ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      operation.security ??= [];
      operation.operationId ??= `${method}${name.charAt(0).toUpperCase()}${name.slice(1)}`;
    }
  }
  markResponseEnumsOpen(document as unknown as Record<string, unknown>);
  cached = document;
  return cached;
}

/**
 * The same document in OpenAPI 3.0 (openapi-30.ts), for generators that read only 3.0: served at
 * /docs/openapi-3.0.json.
 */
export function openApi30Document(): object {
  cached30 ??= toOpenApi30(openApiDocument());
  return cached30;
}
