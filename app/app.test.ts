import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_CSP } from '../api/routes/app-page.ts';
import { startTestService, type TestService } from '../test/support/service.ts';
import { buildApp, BUNDLE_BUDGET } from './build.ts';

describe('the page\'s bundle', () => {
  it(`stays within its budget (${BUNDLE_BUDGET.gzipBytes} bytes gzipped, ${BUNDLE_BUDGET.rawBytes} raw) and loads nothing from another origin`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'relayer-app-'));
    try {
      const built = await buildApp(path.join(dir, 'dist'));
      console.log(`app bundle: ${built.rawBytes} bytes, ${built.gzipBytes} gzipped`, built.files);
      expect(built.gzipBytes).toBeLessThanOrEqual(BUNDLE_BUDGET.gzipBytes);
      expect(built.rawBytes).toBeLessThanOrEqual(BUNDLE_BUDGET.rawBytes);
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

  it('answers only reads: another method is refused, an unknown file is the API\'s 404', async () => {
    expect((await service.request('/app/', { method: 'POST' })).status).toBe(404);
    const missing = await service.request('/app/nothing.js');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
  });
});
