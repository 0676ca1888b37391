import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../test/support/service.ts';
import { loginEvm, newEvmAccount } from '../test/support/wallets.ts';

/** Deterministic pseudo-random generator, so a failure replays. */
function rng(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const NASTY = [
  '', ' ', '0', '-1', '1e309', '9'.repeat(400), '1.0', '0x10', 'NaN', 'null', 'undefined', 'true', '[]', '{}',
  "' OR 1=1 --", '"; DROP TABLE ads; --', '%00', '\u0000', '😀'.repeat(50), 'ℵ', '\u202e', 'a'.repeat(5000),
  '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '../../etc/passwd', '%', '%zz', '%E0%A4%A',
  '<script>', '\\', '{"$gt":""}', 'ACTIVE', 'PENDING', '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
];

const ENDPOINTS = ['/v1/chains', '/v1/routes', '/v1/ads', '/v1/trades/all'];
const ITEM_ENDPOINTS = ['/v1/chains/', '/v1/routes/', '/v1/ads/', '/v1/trades/'];
const PARAMS = ['name', 'chainId', 'adTokenId', 'orderTokenId', 'adChainId', 'orderChainId', 'symbol', 'routeId', 'creatorAddress',
  'status', 'adId', 'adCreatorAddress', 'bridgerAddress', 'minAmount', 'maxAmount', 'cursor', 'limit', 'x', 'limit[]', 'a[b]', '__proto__'];

describe('malformed requests', () => {
  let service: TestService;
  beforeAll(async () => { service = await startTestService(); });
  afterAll(async () => { await service.close(); });

  it('never produce a 5xx on any read endpoint (400 random requests)', async () => {
    const random = rng(20261122);
    const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]!;
    const value = () => (random() < 0.7 ? pick(NASTY) : randomBytes(Math.floor(random() * 40)).toString(pick(['hex', 'base64', 'latin1'] as const)));
    const failures: string[] = [];
    const requests: string[] = [];
    for (let i = 0; i < 400; i += 1) {
      if (random() < 0.3) {
        requests.push(pick(ITEM_ENDPOINTS) + encodeURIComponent(value()));
        continue;
      }
      const query = Array.from({ length: 1 + Math.floor(random() * 4) }, () => {
        const key = pick(PARAMS);
        // Sometimes send raw (unencoded) bytes, sometimes repeat a key to make an array.
        const raw = random() < 0.2 ? value() : encodeURIComponent(value());
        return random() < 0.15 ? `${key}=${raw}&${key}=${raw}` : `${key}=${raw}`;
      }).join('&');
      requests.push(`${pick(ENDPOINTS)}?${query}`);
    }
    for (let i = 0; i < requests.length; i += 20) {
      await Promise.all(requests.slice(i, i + 20).map(async (path) => {
        let status: number;
        try {
          const res = await service.request(path);
          status = res.status;
          const body = await res.json();
          if (status >= 400 && (body.statusCode !== status || typeof body.error !== 'string')) failures.push(`${path}: body ${JSON.stringify(body)}`);
        } catch (error) {
          // fetch itself refuses some raw bytes in URLs; that request never reached the server.
          if (error instanceof TypeError) return;
          throw error;
        }
        if (status >= 500) failures.push(`${path}: ${status}`);
      }));
    }
    expect(failures).toEqual([]);
  });

  it('never produce a 5xx for odd bodies and content types on a POST endpoint', async () => {
    const bodies = ['[]', '"x"', '1', 'null', '{"a":' + '['.repeat(5000), '\u0000', '{"__proto__":{"x":1}}', 'x'.repeat(2000)];
    for (const body of bodies) {
      for (const type of ['application/json', 'text/plain', 'application/json; charset=utf-16', 'application/x-www-form-urlencoded']) {
        const res = await service.request('/v1/trades/create', { method: 'POST', headers: { 'content-type': type }, body });
        expect(res.status, `${type} ${body.slice(0, 20)}`).toBeLessThan(500);
      }
    }
  });
});

/** A cursor as db/pagination.ts issues it: base64url JSON `[list, createdAt, id]`. */
const cursorOf = (list: string, createdAt: string) => Buffer.from(JSON.stringify([list, createdAt, '0b5a4f8e-2c1d-4d7e-9a3b-6f1e2d3c4b5a'])).toString('base64url');
/** An impossible instant, and an ads cursor holding it. */
const IMPOSSIBLE_DATE = '2024-13-45T99:99:99Z';
const IMPOSSIBLE_CURSOR = cursorOf('ads', IMPOSSIBLE_DATE);
const LONG = 'a'.repeat(20_000);

/** Odd values for a URL (already percent-encoded): NUL, a lone surrogate's bytes, over-long, impossible dates. */
const ODD_URL_VALUES = ['%00', `a%00b`, '%ED%A0%80', '%ED%B0%80x', LONG, encodeURIComponent(IMPOSSIBLE_DATE), IMPOSSIBLE_CURSOR,
  encodeURIComponent(cursorOf('ads', '2024-02-30 10:00:00+00'))];
/** Odd values for a JSON body field: the same as strings (JSON can carry a real lone surrogate), plus wrong types. */
const ODD_JSON_VALUES: unknown[] = ['\u0000', 'a\u0000b', '\ud800', 'x\udc00', '\ud83d', LONG, IMPOSSIBLE_DATE, IMPOSSIBLE_CURSOR,
  '2024-02-30T00:00:00Z', null, -1, 1e308, 0.5, true, [], {}, ['\u0000'], { '\u0000': '\ud800' }];

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  example?: unknown;
  format?: string;
  items?: Schema;
}
interface Operation {
  tags?: string[];
  security?: unknown[];
  parameters?: { name: string; in: string; schema?: Schema; example?: unknown }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}
interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

/** Reads the document's schemas: resolves `$ref`s, and builds a plausible value for a schema. */
function schemaTools(doc: OpenApi) {
  const resolve = (schema: Schema | undefined): Schema => {
    if (!schema) return {};
    if (schema.$ref) return resolve(doc.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')]);
    return schema;
  };
  /** Each alternative shape of a (possibly union) object schema. */
  const variants = (schema: Schema | undefined): Schema[] => {
    const s = resolve(schema);
    const alternatives = s.oneOf ?? s.anyOf;
    return alternatives ? alternatives.flatMap(variants) : [s];
  };
  const sample = (schema: Schema | undefined): unknown => {
    const s = resolve(schema);
    if (s.example !== undefined) return s.example;
    if (s.const !== undefined) return s.const;
    if (s.enum) return s.enum[0];
    if (s.oneOf ?? s.anyOf) return sample((s.oneOf ?? s.anyOf)![0]);
    const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type;
    if (type === 'object' || s.properties) {
      return Object.fromEntries(Object.entries(s.properties ?? {}).map(([key, value]) => [key, sample(value)]));
    }
    if (type === 'array') return [];
    if (type === 'integer' || type === 'number') return 1;
    if (type === 'boolean') return true;
    if (s.format === 'uuid') return '0b5a4f8e-2c1d-4d7e-9a3b-6f1e2d3c4b5a';
    return 'x';
  };
  return { resolve, variants, sample };
}

/** Every (path to a field, object) in a body: top-level fields and those of nested objects. */
function fieldPaths(value: unknown, prefix: string[] = []): string[][] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([key, inner]) => [[...prefix, key], ...fieldPaths(inner, [...prefix, key])]);
}

function withField(body: unknown, path: string[], replacement: unknown): unknown {
  const copy = structuredClone(body) as Record<string, unknown>;
  let target = copy;
  for (const key of path.slice(0, -1)) target = target[key] as Record<string, unknown>;
  target[path[path.length - 1]!] = replacement;
  return copy;
}

describe('odd input', () => {
  let service: TestService;
  beforeAll(async () => { service = await startTestService(); });
  afterAll(async () => { await service.close(); });

  const messagesOf = async (res: Response) => [(await res.json()).message].flat().join('\n');

  it.each([
    ['/v1/ads?creatorAddress=%00', 'creatorAddress'],
    ['/v1/trades/all?adCreatorAddress=%00', 'adCreatorAddress'],
    ['/v1/trades/all?bridgerAddress=a%00', 'bridgerAddress'],
    ['/v1/chains?name=%00', 'name'],
    ['/v1/routes?symbol=%00', 'symbol'],
  ])('answers a NUL byte in a text filter (%s) with 422 naming the parameter', async (path, parameter) => {
    const res = await service.request(path);
    expect(res.status).toBe(422);
    expect(await messagesOf(res)).toMatch(new RegExp(`^${parameter} `, 'm'));
  });

  it.each([['/v1/ads', 'ads'], ['/v1/trades/all', 'trades'], ['/v1/chains', 'chains'], ['/v1/routes', 'routes']])('answers a cursor holding an impossible date on %s with 422 naming cursor', async (path, list) => {
    for (const createdAt of [IMPOSSIBLE_DATE, '2023-02-29 10:00:00+00', '2024-04-31T00:00:00Z', '0000-01-01T00:00:00Z', '2024-01-01T24:00:00Z', '2024-01-01T00:00:60Z', '2024-01-01T00:00:00+99:00']) {
      const cursor = cursorOf(list, createdAt);
      const res = await service.request(`${path}?cursor=${cursor}`);
      expect(res.status, createdAt).toBe(422);
      expect(await messagesOf(res)).toMatch(/^cursor /m);
    }
  });

  it('still accepts a cursor holding a real leap-day instant', async () => {
    expect((await service.request(`/v1/ads?cursor=${cursorOf('ads', '2024-02-29 23:59:59.999999+00')}`)).status).toBe(200);
  });

  it('answers a NUL byte or lone surrogate in a JSON body field with 422 naming the field', async () => {
    for (const refresh of ['a\u0000b', '\ud800x']) {
      const res = await service.request('/v1/auth/refresh', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ refresh }) });
      expect(res.status).toBe(422);
      expect(await messagesOf(res)).toMatch(/^refresh /m);
    }
  });

  it('never answers 5xx to NUL bytes, lone surrogates, over-long strings or impossible dates in any parameter or body field of any endpoint the OpenAPI document lists', async () => {
    const doc = (await (await service.request('/openapi.json')).json()) as OpenApi;
    const { variants, sample } = schemaTools(doc);
    const failures: string[] = [];
    let sent = 0;
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })));
    expect(operations.length).toBeGreaterThan(20);
    for (const { path, method, operation } of operations) {
      // A fresh session per operation, so a body or path that ends one (logout) cannot starve the others.
      const token = operation.security?.length ? (await loginEvm(service, newEvmAccount())).body.tokens.access as string : undefined;
      const parameters = operation.parameters ?? [];
      const pathParams = Object.fromEntries(parameters.filter((p) => p.in === 'path').map((p) => [p.name, encodeURIComponent(String(p.example ?? sample(p.schema)))]));
      const url = (params: Record<string, string>, query = '') => path.replace(/\{([^}]+)\}/g, (_m, name: string) => params[name] ?? 'x') + query;
      const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
      const baseBodies = bodySchema ? variants(bodySchema).map(sample) : [undefined];
      const requests: { url: string; body?: unknown }[] = [];
      for (const value of ODD_URL_VALUES) {
        for (const p of parameters) {
          if (p.in === 'path') requests.push({ url: url({ ...pathParams, [p.name]: value }), body: baseBodies[0] });
          if (p.in === 'query') requests.push({ url: url(pathParams, `?${encodeURIComponent(p.name)}=${value}`), body: baseBodies[0] });
        }
      }
      for (const base of baseBodies) {
        if (base === undefined) continue;
        for (const field of fieldPaths(base)) {
          for (const value of ODD_JSON_VALUES) requests.push({ url: url(pathParams), body: withField(base, field, value) });
        }
      }
      if (requests.length === 0) requests.push({ url: url(pathParams) });
      for (let i = 0; i < requests.length; i += 10) {
        await Promise.all(requests.slice(i, i + 10).map(async ({ url: target, body }) => {
          const headers: Record<string, string> = {};
          if (token) headers.authorization = `Bearer ${token}`;
          if (body !== undefined) headers['content-type'] = 'application/json';
          const res = await service.request(target, { method: method.toUpperCase(), headers, body: body === undefined ? undefined : JSON.stringify(body) });
          sent += 1;
          const text = await res.text();
          // 501 is a planned endpoint's honest answer; any other 5xx is a bug.
          const planned = operation.tags?.includes('Planned') && res.status === 501;
          if (res.status >= 500 && !planned) failures.push(`${method.toUpperCase()} ${target.slice(0, 120)} ${JSON.stringify(body)?.slice(0, 120)}: ${res.status} ${text.slice(0, 100)}`);
        }));
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(300);
  });
});
