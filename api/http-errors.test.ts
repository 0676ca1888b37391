import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueAccessToken } from '../auth/tokens.ts';
import { startTestService, type TestService } from '../test/support/service.ts';

/** Every error the HTTP layer itself produces, in the spec's body. */
describe('HTTP error handling', () => {
  let service: TestService;
  beforeAll(async () => { service = await startTestService({ BODY_LIMIT: '1kb' }); });
  afterAll(async () => { await service.close(); });

  const post = (path: string, body: string, type = 'application/json') =>
    service.request(path, { method: 'POST', headers: { 'content-type': type }, body });

  it('answers an unknown path with 404 in the spec body', async () => {
    const res = await service.request('/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ statusCode: 404, message: 'no route for GET /v1/nothing-here', error: 'Not Found', code: 'ROUTE_NOT_FOUND', retryable: false });
  });

  it('answers a wrong method on a known path with 405 and Allow', async () => {
    const res = await service.request('/v1/chains', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect(await res.json()).toMatchObject({ error: 'Method Not Allowed', code: 'METHOD_NOT_ALLOWED' });
    // /docs too (Swagger UI's handler answers any method with the page): 405, and the page on GET.
    for (const [method, path] of [['PUT', '/docs'], ['DELETE', '/docs/'], ['POST', '/docs/']]) {
      const other = await service.request(path!, { method });
      expect(other.status, `${method} ${path}`).toBe(405);
      expect(other.headers.get('allow'), `${method} ${path}`).toBe('GET, HEAD');
    }
    expect((await service.request('/docs/swagger-ui.css', { method: 'POST' })).status).toBe(404);
    // A literal path is not a sibling's id: GET /v1/ads/create is 405 (POST), not 422 "id must be a UUID".
    for (const [method, path, allow] of [['GET', '/v1/ads/create', 'POST'], ['GET', '/v1/trades/create/', 'POST'], ['POST', '/v1/trades/all', 'GET, HEAD'], ['DELETE', '/metrics', 'GET, HEAD']]) {
      const literal = await service.request(path!, { method, headers: { 'content-type': 'application/json' }, body: method === 'GET' ? undefined : '{' });
      expect(literal.status, `${method} ${path}`).toBe(405);
      expect(literal.headers.get('allow'), `${method} ${path}`).toBe(allow);
    }
    const page = await service.request('/docs/');
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/swagger-ui/);
  });

  it('answers malformed JSON with 400', async () => {
    const res = await post('/v1/ads/create', '{"routeId": ');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ statusCode: 400, message: 'body is not valid JSON', error: 'Bad Request', code: 'INVALID_JSON', retryable: false });
  });

  it('answers a JSON body that is not an object with 422 naming body, on public and authenticated endpoints', async () => {
    for (const [body, received] of [['[]', 'an array'], ['"x"', 'a string'], ['null', 'null'], ['7', 'a number'], ['true', 'a boolean']]) {
      for (const path of ['/v1/auth/challenge', '/v1/ads/create']) {
        const res = await post(path, body!);
        expect(res.status, `${path} ${body}`).toBe(422);
        expect(await res.json()).toEqual({ statusCode: 422, message: [`body must be a JSON object, received ${received}`], error: 'Unprocessable Entity', code: 'VALIDATION_FAILED', retryable: false });
      }
    }
  });

  it('answers a body in another media type with 415, not as a missing field', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
      const res = await post('/v1/auth/challenge', '{"address":"0x2c7536E3605D9C16a7a3D7b1898e529396a65c23","chainKind":"EVM"}', type);
      expect(res.status, type).toBe(415);
      expect(await res.json()).toEqual({ statusCode: 415, message: `Content-Type must be application/json (received "${type}")`, error: 'Unsupported Media Type', code: 'UNSUPPORTED_MEDIA_TYPE', retryable: false });
    }
    const untyped = await service.request('/v1/auth/challenge', { method: 'POST', body: new Uint8Array([123, 125]) });
    expect(untyped.status).toBe(415);
    // A JSON media type with parameters or a +json suffix is JSON; a request with no body needs no type.
    expect((await post('/v1/auth/challenge', '{}', 'application/json; charset=utf-8')).status).toBe(422);
    expect((await post('/v1/auth/challenge', '{}', 'application/vnd.api+json')).status).toBe(422);
    expect((await service.request('/v1/auth/logout', { method: 'POST', headers: { 'content-type': 'text/plain' } })).status).toBe(401);
  });

  it('answers an oversized body with 413', async () => {
    const res = await post('/v1/ads/create', JSON.stringify({ metadata: 'x'.repeat(5000) }));
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: 'Payload Too Large', code: 'PAYLOAD_TOO_LARGE' });
  });

  it('answers a malformed percent-encoding in the path with 4xx, never 500', async () => {
    const res = await service.request('/v1/ads/%E0%A4%A');
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect((await res.json()).code).toBe('BAD_REQUEST');
  });

  it('gives 401 UNAUTHENTICATED without a token and TOKEN_EXPIRED for an expired one, and 404 AD_NOT_FOUND / TRADE_NOT_FOUND / CHAIN_NOT_FOUND / TOKEN_ROUTE_NOT_FOUND for what is missing', async () => {
    const noToken = await service.request('/v1/auth/logout', { method: 'POST' });
    expect(await noToken.json()).toMatchObject({ statusCode: 401, code: 'UNAUTHENTICATED' });
    // A real access token, signed with the service's key, that expired an hour ago.
    const expired = issueAccessToken({ ...service.container.auth.tokens, accessTtlSeconds: 60 },
      { userId: '00000000-0000-4000-8000-000000000000', account: '0x2c7536E3605D9C16a7a3D7b1898e529396a65c23' }, '00000000-0000-4000-8000-000000000001', undefined, new Date(Date.now() - 3_600_000));
    const late = await service.request('/v1/auth/logout', { method: 'POST', headers: { authorization: `Bearer ${expired}` } });
    expect(late.status).toBe(401);
    expect((await late.json()).code).toBe('TOKEN_EXPIRED');
    const garbage = await service.request('/v1/auth/logout', { method: 'POST', headers: { authorization: 'Bearer not.a.token' } });
    expect((await garbage.json()).code).toBe('UNAUTHENTICATED');
    const ad = await service.request('/v1/ads/00000000-0000-4000-8000-000000000000');
    expect(await ad.json()).toMatchObject({ statusCode: 404, code: 'AD_NOT_FOUND' });
    const none = '00000000-0000-4000-8000-000000000000';
    for (const [path, code] of [[`/v1/trades/${none}`, 'TRADE_NOT_FOUND'], [`/v1/trades/${none}/events`, 'TRADE_NOT_FOUND'], ['/v1/chains/999999999', 'CHAIN_NOT_FOUND'],
      [`/v1/routes/${none}`, 'TOKEN_ROUTE_NOT_FOUND'], [`/v1/quotes?routeId=${none}&amount=1`, 'TOKEN_ROUTE_NOT_FOUND'], ['/v1/nothing-here', 'ROUTE_NOT_FOUND']] as const) {
      const res = await service.request(path);
      expect(await res.json(), path).toMatchObject({ statusCode: 404, code });
    }
  });

  it('builds every endpoint of the spec: none is left planned or answers 501', async () => {
    const document = await (await service.request('/openapi.json')).json();
    const tags = Object.values(document.paths as Record<string, Record<string, { tags?: string[] }>>).flatMap((p) => Object.values(p).flatMap((o) => o.tags ?? []));
    expect(tags).not.toContain('Planned');
    // The Maker's endpoints document a request and a response example.
    const resolve = (schema: { $ref?: string }) => (schema.$ref ? document.components.schemas[schema.$ref.split('/').pop()!] : schema);
    for (const [route, operations] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      if (!route.startsWith('/v1/ads/') || route === '/v1/ads/{id}') continue;
      for (const operation of Object.values(operations)) {
        expect(resolve(operation.requestBody.content['application/json'].schema).example, route).toBeDefined();
        expect(resolve(operation.responses['200'].content['application/json'].schema).example, route).toBeDefined();
      }
    }
    const res = await post('/v1/trades/create', '{}');
    expect(res.status).toBe(401);
    expect((await res.json()).error).toBe('Unauthorized');
  });

  it('sends helmet security headers and a request id', async () => {
    const res = await service.request('/v1/chains');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get('x-powered-by')).toBeNull();
  });

  it('rejects an unknown query parameter naming it, and a repeated one', async () => {
    expect((await (await service.request('/v1/ads?creator=0xabc')).json()).message).toEqual(['unknown field creator']);
    const repeated = await (await service.request('/v1/ads?limit=1&limit=2')).json();
    expect(repeated.statusCode).toBe(422);
    expect(repeated.message[0]).toMatch(/^limit /);
  });
});

describe('rate limits', () => {
  let service: TestService;
  beforeAll(async () => { service = await startTestService({ RATE_LIMIT_MAX: '5', AUTH_RATE_LIMIT_MAX: '2' }); });
  afterAll(async () => { await service.close(); });

  it('answers 429 in the spec body with standard RateLimit headers once the budget is spent', async () => {
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 7; i += 1) {
      last = await service.request('/v1/chains');
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(last!.headers.get('ratelimit-policy')).toContain('q=5');
    expect(last!.headers.get('ratelimit')).toContain('r=0');
    expect(await last!.json()).toEqual({
      statusCode: 429, message: 'too many general requests; retry later with exponential backoff', error: 'Too Many Requests', code: 'RATE_LIMITED', retryable: true
    });
  });

  it('is stricter on /v1/auth/*', async () => {
    const fresh = await startTestService({ AUTH_RATE_LIMIT_MAX: '2' });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await fresh.request('/v1/auth/challenge', { method: 'POST' })).status);
      expect(statuses[2]).toBe(429);
      // express-rate-limit's own handler answers in the same body, code included.
      expect((await (await fresh.request('/v1/auth/challenge', { method: 'POST' })).json()).code).toBe('RATE_LIMITED');
      expect((await fresh.request('/v1/chains')).status).toBe(200);
    } finally {
      await fresh.close();
    }
  });
});
