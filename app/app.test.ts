import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_CSP, appCsp } from '../api/routes/app-page.ts';
import { insertChain } from '../test/support/fixtures.ts';
import { startTestService, type TestService } from '../test/support/service.ts';
import { buildApp, BUNDLE_BUDGET, STELLAR_CHUNK_BUDGET } from './build.ts';

describe('the page\'s bundle', () => {
  it(`stays within its budget (${BUNDLE_BUDGET.gzipBytes} bytes gzipped, ${BUNDLE_BUDGET.rawBytes} raw) and loads nothing from another origin`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'relayer-app-'));
    try {
      const built = await buildApp(path.join(dir, 'dist'));
      console.log(`app bundle: ${built.rawBytes} bytes, ${built.gzipBytes} gzipped`, built.files);
      expect(built.gzipBytes).toBeLessThanOrEqual(BUNDLE_BUDGET.gzipBytes);
      expect(built.rawBytes).toBeLessThanOrEqual(BUNDLE_BUDGET.rawBytes);
      // stellar-sdk is not in the first visit: it is a chunk of its own behind import(), with its own budget.
      console.log(`stellar chunk: ${built.stellar.rawBytes} bytes, ${built.stellar.gzipBytes} gzipped`, built.stellar.files);
      expect(built.stellar.files.length).toBeGreaterThan(0);
      expect(built.stellar.rawBytes).toBeGreaterThan(BUNDLE_BUDGET.rawBytes);
      expect(built.stellar.gzipBytes).toBeLessThanOrEqual(STELLAR_CHUNK_BUDGET.gzipBytes);
      expect(built.stellar.rawBytes).toBeLessThanOrEqual(STELLAR_CHUNK_BUDGET.rawBytes);
      const main = readFileSync(path.join(dir, 'dist', 'app.js'), 'utf8');
      expect(main).not.toContain('SorobanAuthorizationEntry');
      const html = readFileSync(path.join(dir, 'dist', 'index.html'), 'utf8');
      const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]);
      expect(assets).toEqual(['app.css', 'app.js']);
      // No inline script or style for the CSP to have to allow.
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('/app, served by the service', () => {
  let service: TestService;
  beforeAll(async () => {
    await buildApp();
    service = await startTestService();
  });
  afterAll(async () => { await service?.close(); });

  it('serves the page and its assets with a content security policy allowing only itself (the API is this origin)', async () => {
    const redirect = await service.request('/app', { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/app/');
    for (const [file, type] of [['/app/', 'text/html'], ['/app/app.js', 'text/javascript'], ['/app/app.css', 'text/css']] as const) {
      const response = await service.request(file);
      expect(response.status, file).toBe(200);
      expect(response.headers.get('content-type'), file).toContain(type);
      expect(response.headers.get('content-security-policy'), file).toBe(APP_CSP);
    }
    const directives = Object.fromEntries(APP_CSP.split('; ').map((directive) => { const [name, ...values] = directive.split(' '); return [name, values]; }));
    expect(directives).toMatchObject({
      'default-src': ["'none'"], 'script-src': ["'self'"], 'style-src': ["'self'"], 'connect-src': ["'self'"], 'frame-ancestors': ["'none'"],
    });
    for (const sources of Object.values(directives) as string[][]) {
      for (const source of sources) expect(["'self'", "'none'", 'data:']).toContain(source);
    }
  });

  it('admits in connect-src exactly the chain RPC URLs the registry publishes (publicRpcUrl), read when the page is served', async () => {
    const rpcUrl = 'http://127.0.0.1:18123/soroban/rpc';
    const chain = await insertChain(service.db.knex, {
      kind: 'STELLAR', network_passphrase: 'Test SDF Network ; September 2015', public_rpc_url: rpcUrl,
      ad_manager_address: 'CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC', order_portal_address: 'CDLZFC3SYJYDZT7K67VZ75HPJVIEUVNIXF47ZG2FB2RMQQVU2HHGCYSC',
    });
    try {
      const policy = (await service.request('/app/')).headers.get('content-security-policy');
      expect(policy).toBe(appCsp([rpcUrl]));
      const connect = policy!.split('; ').find((directive) => directive.startsWith('connect-src '));
      expect(connect).toBe(`connect-src 'self' ${rpcUrl}`);
    } finally {
      await service.db.knex('chains').where('id', chain.id).delete();
    }
    expect((await service.request('/app/')).headers.get('content-security-policy')).toBe(APP_CSP);
  });

  it('never lets a registry value widen the policy: a URL that is not http(s), or would add a source or a directive, is left out', () => {
    expect(appCsp(['javascript:alert(1)', 'https://a.example/x;script-src *', 'https://user:pw@a.example/x', "https://a.example/'unsafe-eval'", 'not a url'])).toBe(APP_CSP);
    expect(appCsp(['https://rpc.example:8443/soroban?x=1'])).toContain("connect-src 'self' https://rpc.example:8443/soroban;");
  });

  it('answers only reads: another method is refused, an unknown file is the API\'s 404', async () => {
    expect((await service.request('/app/', { method: 'POST' })).status).toBe(404);
    const missing = await service.request('/app/nothing.js');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
  });
});
