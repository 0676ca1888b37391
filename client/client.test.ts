import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
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

  it('declares types a dApp compiles with TypeScript 5, strict and checking the declarations themselves (no skipLibCheck)', async () => {
    // The workspace's own TypeScript 5 (client/node_modules), as a dApp's build has; the repository's tsc skips .d.ts files.
    const tsc = new URL('./node_modules/.bin/tsc', import.meta.url).pathname;
    const args = ['--noEmit', '--strict', '--skipLibCheck', 'false', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--allowImportingTsExtensions', 'index.d.ts'];
    const { stdout } = await promisify(execFile)(tsc, args, { cwd: new URL('.', import.meta.url).pathname }).catch((error: { stdout?: string }) => ({ stdout: `failed: ${error.stdout}` }));
    expect(stdout).toBe('');
  }, 60_000);

  it('refuses at compile time the calls the server would refuse: no body, a misspelt filter, a wrong field or value', () => {
    const api = createRelayerClient('http://localhost');
    // Never called: `npm run typecheck` is the check; an @ts-expect-error that finds no error fails it.
    const refusedByTypes = () => [
      // @ts-expect-error the body is required (the server would answer 422)
      api.POST('/v1/ads/create', {}),
      // @ts-expect-error a misspelt filter
      api.GET('/v1/ads', { params: { query: { stauts: 'ACTIVE' } } }),
      // @ts-expect-error amounts are decimal strings, not numbers
      api.POST('/v1/trades/create', { body: { adId: 'a', routeId: 'r', amount: 100, bridgerDstAddress: '0x' } }),
      // @ts-expect-error a Maker sets ACTIVE or PAUSED only
      api.PATCH('/v1/ads/{id}/update', { params: { path: { id: 'a' } }, body: { status: 'EXHAUSTED' } }),
      // null clears: accepted by the types as by the server.
      api.PATCH('/v1/ads/{id}/update', { params: { path: { id: 'a' } }, body: { minAmount: null, metadata: null } }),
    ];
    expect(typeof refusedByTypes).toBe('function');
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
