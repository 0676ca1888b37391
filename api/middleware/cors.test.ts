import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type Config } from '../../config/config.ts';
import { corsPolicy } from './cors.ts';

/**
 * The CORS policy as a browser sees it, request by request (test/browser/browser-cors.test.ts runs a real
 * browser against it): what each configuration lets a page on another origin read.
 */

const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

async function serve(config: Pick<Config, 'NODE_ENV' | 'CORS_ORIGINS'>): Promise<string> {
  const app = express();
  app.use(corsPolicy(config));
  app.get('/v1/ads', (_req, res) => { res.setHeader('ETag', 'W/"1"'); res.json({ data: [], nextCursor: null }); });
  const server = await new Promise<Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const preflight = (url: string, origin: string) => fetch(url, {
  method: 'OPTIONS',
  headers: { origin, 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization,content-type' },
});

describe('CORS in development', () => {
  it('allows any origin, preflights Bearer requests and exposes the headers a client reads', async () => {
    const url = await serve({ NODE_ENV: 'development', CORS_ORIGINS: undefined });
    const answer = await preflight(`${url}/v1/ads`, 'http://dapp.example:5173');
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe('http://dapp.example:5173');
    expect(answer.headers.get('access-control-allow-methods')).toContain('PATCH');
    expect(answer.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    // A page may make its POSTs safe to retry.
    expect(answer.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('idempotency-key');
    const read = await fetch(`${url}/v1/ads`, { headers: { origin: 'http://anything.example' } });
    expect(read.headers.get('access-control-allow-origin')).toBe('http://anything.example');
    expect(read.headers.get('access-control-expose-headers')).toBe('ETag,RateLimit,RateLimit-Policy,Retry-After,Allow,Idempotent-Replayed');
    expect(read.headers.get('access-control-allow-credentials')).toBeNull();
    expect(read.headers.get('vary')).toContain('Origin');
  });
});

describe('CORS in production', () => {
  it('allows exactly the listed origins', async () => {
    const url = await serve(loadConfig({
      NODE_ENV: 'production', RELAYER_SIGNER_ALLOW_ENV: 'true', CORS_ORIGINS: 'https://app.example.org, https://Beta.Example.org:8443/',
      SIWE_DOMAIN: 'app.example.org', SIWE_URI: 'https://app.example.org', SEP10_HOME_DOMAIN: 'example.org', SEP10_WEB_AUTH_DOMAIN: 'api.example.org',
    }, 'api'));
    for (const origin of ['https://app.example.org', 'https://beta.example.org:8443']) {
      expect((await fetch(`${url}/v1/ads`, { headers: { origin } })).headers.get('access-control-allow-origin')).toBe(origin);
    }
    for (const origin of ['https://evil.example', 'http://app.example.org', 'https://app.example.org.evil.example', 'null']) {
      expect((await fetch(`${url}/v1/ads`, { headers: { origin } })).headers.get('access-control-allow-origin')).toBeNull();
      expect((await preflight(`${url}/v1/ads`, origin)).headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('allows no other origin when CORS_ORIGINS is unset', async () => {
    const url = await serve({ NODE_ENV: 'production', CORS_ORIGINS: undefined });
    expect((await fetch(`${url}/v1/ads`, { headers: { origin: 'https://app.example.org' } })).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses to start with * or with something that is not an origin, naming CORS_ORIGINS', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', CORS_ORIGINS: 'https://app.example.org,*' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'production', CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS: must list the allowed origins in production, not \*/);
    expect(() => loadConfig({ CORS_ORIGINS: 'https://app.example.org/path' })).toThrow(/CORS_ORIGINS: 'https:\/\/app.example.org\/path' is not an origin/);
    expect(() => loadConfig({ CORS_ORIGINS: 'app.example.org' })).toThrow(/CORS_ORIGINS/);
    expect(loadConfig({ CORS_ORIGINS: '*' }).CORS_ORIGINS).toEqual(['*']);
  });
});
