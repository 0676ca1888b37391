import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../test/support/service.ts';
import { generateClientTypes, servedDocument } from './generate.ts';
import { createRelayerClient } from './index.js';

/**
 * The committed client matches the service: its openapi.json is the document /openapi.json serves,
 * and its schema.d.ts is what openapi-typescript makes of it. Regenerate with `npm run client:generate`.
 * (test/client-trade.test.ts settles a whole trade through it.)
 */
describe('the typed client package', () => {
  let service: TestService;
  beforeAll(async () => { service = await startTestService(); });
  afterAll(async () => { await service?.close(); });

  const committed = (file: string) => readFileSync(new URL(file, import.meta.url), 'utf8');

  it('carries the document the service serves (else run npm run client:generate)', async () => {
    const served = await (await service.request('/openapi.json')).json();
    expect(JSON.parse(committed('./openapi.json'))).toEqual(served);
    expect(servedDocument()).toEqual(served);
  });

  it('carries the types openapi-typescript generates from it (else run npm run client:generate)', async () => {
    expect(committed('./schema.d.ts')).toBe(await generateClientTypes(JSON.parse(committed('./openapi.json'))));
  });

  it('speaks to the service: typed reads, the error body, and the Bearer token when one is given', async () => {
    const anonymous = createRelayerClient(service.url);
    const chains = await anonymous.GET('/v1/chains', { params: { query: { limit: 5 } } });
    expect(chains.response.status).toBe(200);
    expect(chains.data).toEqual({ data: [], nextCursor: null });
    const me = await anonymous.GET('/v1/auth/me');
    expect(me.response.status).toBe(401);
    expect(me.error).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
    const withToken = createRelayerClient(service.url, { accessToken: () => 'not-a-token' });
    expect((await withToken.GET('/v1/auth/me')).error?.message).toMatch(/token/i);
  });
});
