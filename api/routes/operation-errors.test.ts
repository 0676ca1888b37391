import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.ts';
import { loginEvm, newEvmAccount } from '../../test/support/wallets.ts';
import { ERROR_CODES, isErrorCode } from '../error-codes.ts';
import { openApiDocument } from '../openapi/document.ts';
import { EXAMPLE_SCHEMAS, RESPONSE_EXAMPLES } from '../openapi/examples.ts';
import { OPERATION_ERRORS } from './operation-errors.ts';

type Response_ = { description: string; 'x-error-codes'?: string[]; content?: Record<string, { example?: unknown; schema?: { $ref?: string } }> };
type Operation = {
  operationId: string;
  security?: Record<string, unknown>[];
  parameters?: { in: string; name: string; required?: boolean }[];
  requestBody?: { content: Record<string, { schema?: { $ref?: string }; example?: unknown }> };
  responses: Record<string, Response_>;
};
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, { example?: unknown }> } };

const document = openApiDocument() as Document;
const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })));

/** Deterministic pseudo-random UUIDs (a fixed seed), so a failure replays; a failing request is named in full. */
function uuids(seed: number): () => string {
  let state = seed >>> 0;
  const hex = () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state.toString(16).padStart(8, '0');
  };
  return () => {
    const h = hex() + hex() + hex() + hex();
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
  };
}

describe('the error codes each operation lists (x-error-codes)', () => {
  it('every operation has a row of registered codes, and each error response lists the codes of its status', () => {
    expect(Object.keys(OPERATION_ERRORS).sort()).toEqual(operations.map(({ operation }) => operation.operationId).sort());
    for (const { operation } of operations) {
      for (const code of OPERATION_ERRORS[operation.operationId]!) expect(isErrorCode(code), `${operation.operationId}: ${code}`).toBe(true);
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        const listed = response['x-error-codes'] ?? [];
        expect(listed.length, `${operation.operationId} ${status}`).toBeGreaterThan(0);
        for (const code of listed) {
          expect(ERROR_CODES[code as keyof typeof ERROR_CODES].status, `${operation.operationId} ${status} ${code}`).toBe(Number(status));
        }
      }
      for (const code of OPERATION_ERRORS[operation.operationId]!) {
        expect(operation.responses[ERROR_CODES[code].status]?.['x-error-codes'], `${operation.operationId}: ${code}`).toContain(code);
      }
    }
  });

  it('the main operations carry a success example their response schema accepts', () => {
    expect(Object.keys(RESPONSE_EXAMPLES).sort()).toEqual(['confirmTradeTransaction', 'createAd', 'createTrade', 'getQuote', 'getTrade', 'unlockTrade']);
    for (const [operationId, example] of Object.entries(RESPONSE_EXAMPLES)) {
      expect(EXAMPLE_SCHEMAS[operationId]!.safeParse(example).error, operationId).toBeUndefined();
      const { operation } = operations.find(({ operation: o }) => o.operationId === operationId)!;
      expect(operation.responses['200']!.content!['application/json']!.example, operationId).toEqual(example);
    }
  });

  describe('against the service', () => {
    let service: TestService;
    let token: string;
    beforeAll(async () => {
      service = await startTestService();
      token = (await loginEvm(service, newEvmAccount())).body.tokens.access as string;
    });
    afterAll(async () => { await service?.close(); });

    it('answers every wrong request an operation can get with a code the operation lists for that status', async () => {
      const uuid = uuids(20261129);
      const observed = new Map<string, Set<string>>();
      const unlisted: string[] = [];
      for (const { path, method, operation } of operations) {
        if (path === '/metrics' || path === '/') continue; // served beside the API (metrics port, a redirect): no error body of its own
        const requestSchema = operation.requestBody?.content['application/json'];
        const ref = requestSchema?.schema?.$ref?.split('/').pop();
        const exampleBody = requestSchema?.example ?? (ref ? document.components.schemas[ref]?.example : undefined);
        // An id nobody has, one of the wrong shape, and a number (chain ids are numbers).
        const ids = [uuid, () => 'not-an-id', () => '4242'];
        const paths = path.includes('{') ? ids.map((id) => path.replaceAll(/\{[^}]+\}/g, () => id())) : [path];
        const bodies: (RequestInit | undefined)[] = method === 'get'
          ? [undefined]
          : [
            { body: '{}', headers: { 'content-type': 'application/json' } },
            { body: '{"unexpected":1', headers: { 'content-type': 'application/json' } },
            { body: '{"unexpected":1}', headers: { 'content-type': 'application/json' } },
            { body: 'text', headers: { 'content-type': 'text/plain' } },
            ...(exampleBody === undefined ? [] : [{ body: JSON.stringify(exampleBody), headers: { 'content-type': 'application/json' } }]),
          ];
        // Logging out ends the session: that operation gets a session of its own each time.
        const signedIn = async () => (operation.operationId === 'logout' ? (await loginEvm(service, newEvmAccount())).body.tokens.access as string : token);
        for (const target of paths) {
          for (const query of ['', '?limit=-1&bogus=1']) {
            for (const init of bodies) {
              for (const auth of [undefined, 'not-a-token', await signedIn()]) {
                const headers = { ...(init?.headers as Record<string, string> | undefined), ...(auth ? { authorization: `Bearer ${auth}` } : {}) };
                const controller = new AbortController();
                const response = await service.request(`${target}${query}`, {
                  ...init, method: method.toUpperCase(), headers, signal: controller.signal, redirect: 'manual',
                });
                if (response.status < 400) { controller.abort(); continue; } // a stream or a success: not a wrong request's answer
                const body = await response.json() as { code: string };
                const listed = operation.responses[response.status]?.['x-error-codes'] ?? [];
                const seen = observed.get(operation.operationId) ?? new Set<string>();
                seen.add(body.code);
                observed.set(operation.operationId, seen);
                if (!listed.includes(body.code)) {
                  const who = auth === 'not-a-token' ? 'a bad token' : auth ? 'signed in' : 'no token';
                  unlisted.push(`${operation.operationId}: ${method.toUpperCase()} ${target}${query} (${who}, ${init?.body ?? 'no body'}) -> `
                    + `${response.status} ${body.code}, listed: ${listed.join(', ') || 'none'}`);
                }
              }
            }
          }
        }
      }
      const pairs = [...observed.values()].reduce((sum, codes) => sum + codes.size, 0);
      console.log(`operation-errors: ${observed.size} operations answered ${pairs} distinct (operation, code) pairs to wrong requests`);
      expect(unlisted).toEqual([]);
      expect(observed.size).toBeGreaterThan(35);
    }, 120_000);
  });
});
