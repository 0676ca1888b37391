import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../test/support/service.ts';

describe('system endpoints', () => {
  let service: TestService;
  beforeAll(async () => { service = await startTestService(); });
  afterAll(async () => { await service.close(); });

  it('reports healthy with the database check', async () => {
    const res = await service.request('/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', checks: { db: 'ok' } });
  });
});

describe('documentation and metrics', () => {
  let service: TestService;
  beforeAll(async () => { service = await startTestService(); });
  afterAll(async () => { await service.close(); });

  const SPEC_ENDPOINTS = [
    'get /health', 'get /docs',
    'post /v1/auth/challenge', 'post /v1/auth/login', 'post /v1/auth/refresh', 'post /v1/auth/link', 'post /v1/auth/logout',
    'get /v1/ads', 'get /v1/ads/{id}', 'post /v1/ads/create', 'post /v1/ads/{id}/fund', 'post /v1/ads/{id}/withdraw',
    'post /v1/ads/{id}/confirm', 'patch /v1/ads/{id}/update', 'post /v1/ads/{id}/close',
    'get /v1/trades/all', 'get /v1/trades/{id}', 'post /v1/trades/create', 'get /v1/trades/{id}/params',
    'post /v1/trades/{id}/lock', 'post /v1/trades/{id}/unlock', 'post /v1/trades/{id}/unlock/confirm', 'post /v1/trades/{id}/confirm',
    'get /v1/chains', 'get /v1/chains/{chainId}', 'get /v1/routes', 'get /v1/routes/{id}',
  ];

  it('serves an OpenAPI 3.1 document covering every endpoint of the spec', async () => {
    const res = await service.request('/openapi.json');
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(doc.openapi).toBe('3.1.0');
    const documented = Object.entries(doc.paths as Record<string, object>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    for (const endpoint of SPEC_ENDPOINTS) expect(documented, endpoint).toContain(endpoint);
    // Query parameters come from the same zod schemas that validate requests.
    const adsParams = doc.paths['/v1/ads'].get.parameters.map((p: { name: string }) => p.name);
    expect(adsParams).toEqual(expect.arrayContaining(['routeId', 'creatorAddress', 'adChainId', 'orderChainId', 'adTokenId', 'orderTokenId', 'status', 'cursor', 'limit']));
  });

  it('serves interactive docs whose assets come from this server, not the internet', async () => {
    const page = await service.request('/docs/');
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('swagger-ui');
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      expect(asset).not.toMatch(/^https?:/);
      expect((await service.request(new URL(asset, `${service.url}/docs/`).pathname)).status, asset).toBe(200);
    }
  });

  it('leads / to the page at /app: a redirect a browser follows to the app, not a 404', async () => {
    const home = await service.request('/', { redirect: 'manual' });
    expect(home.status).toBe(302);
    expect(home.headers.get('location')).toBe('/app/');
    const followed = await service.request('/');
    // The app's page when it is built (npm ci builds it), else its 503 saying how to build it: either way /app.
    expect(followed.url).toBe(`${service.url}/app/`);
    expect([200, 503]).toContain(followed.status);
    // Listed in the document, so another method is 405 with Allow like every listed path.
    const posted = await service.request('/', { method: 'POST' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET, HEAD');
  });

  it('does not serve /metrics on the public API port by default', async () => {
    expect(service.metricsUrl).toBeUndefined();
    const res = await service.request('/metrics');
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ statusCode: 404, message: 'no route for GET /metrics', error: 'Not Found', code: 'ROUTE_NOT_FOUND', retryable: false });
  });
});

describe('metrics on the API port when asked for (METRICS_ON_API_PORT)', () => {
  let service: TestService;
  beforeAll(async () => { service = await startTestService({ METRICS_ON_API_PORT: 'true' }); });
  afterAll(async () => { await service.close(); });

  it('exports process metrics and request durations labelled by route template', async () => {
    await service.request('/v1/ads/00000000-0000-4000-8000-000000000000');
    const text = await (await service.request('/metrics')).text();
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toMatch(/http_request_duration_seconds_bucket\{le="[^"]+",route="\/v1\/ads\/:id",method="GET",status="404"\}/);
    expect(text).not.toContain('00000000-0000-4000-8000-000000000000');
  });
});

describe('metrics on their own port (METRICS_PORT)', () => {
  let service: TestService;
  beforeAll(async () => { service = await startTestService({ METRICS_PORT: '0' }); });
  afterAll(async () => { await service.close(); });

  it('serves /metrics only on the metrics port; the API port answers 404 for it', async () => {
    expect(service.metricsUrl).toBeDefined();
    expect(service.metricsUrl).not.toBe(service.url);
    await service.request('/v1/chains');
    const scraped = await fetch(`${service.metricsUrl}/metrics`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toMatch(/http_request_duration_seconds_bucket\{le="[^"]+",route="\/v1\/chains",method="GET",status="200"\}/);
    const onApi = await service.request('/metrics');
    expect(onApi.status).toBe(404);
    expect(await onApi.json()).toEqual({ statusCode: 404, message: 'no route for GET /metrics', error: 'Not Found', code: 'ROUTE_NOT_FOUND', retryable: false });
    // Another method is a wrong method on a path the document lists (GET /metrics): 405, as everywhere.
    const posted = await service.request('/metrics', { method: 'POST' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET, HEAD');
  });

  it('serves nothing else on the metrics port', async () => {
    for (const path of ['/v1/chains', '/health', '/docs/', '/openapi.json']) {
      expect((await fetch(`${service.metricsUrl}${path}`)).status, path).toBe(404);
    }
  });
});

describe('health without a database', () => {
  it('answers 503 with the failing check when PostgreSQL is unreachable', async () => {
    const { createApp } = await import('./app.ts');
    const { createKnex } = await import('../db/knex.ts');
    const { loadConfig } = await import('../config/config.ts');
    const { pino } = await import('pino');
    const { composeApi } = await import('../entrypoints/compose/api.ts');
    const { resolveSecrets } = await import('../config/secrets.ts');
    const knex = createKnex('postgres://nobody:nothing@127.0.0.1:1/none', 1);
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: mkdtempSync(`${tmpdir()}/health-`) });
    const app = createApp(composeApi(config, pino({ level: 'silent' }), knex, { role: 'embedded', secrets: resolveSecrets(config, 'embedded') }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: 'unavailable', checks: { db: 'unavailable' } });
    } finally {
      server.close();
      await knex.destroy();
    }
  });
});
