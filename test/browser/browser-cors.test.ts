import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import express from 'express';
import { Wallet } from 'ethers';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corsPolicy } from '../../api/middleware/cors.ts';
import { freeLoopbackPort } from '../../entrypoints/free-port.ts';
import { launchBrowser, waitForPage, type TestBrowser } from '../support/browser.ts';
import { insertAd, insertRouteWithChains } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';

/**
 * A dApp page served from another origin calls the API in a real browser (Debian chromium,
 * headless): it signs in with SIWE (an ethers wallet inside the page), lists its own pending ads
 * with its Bearer token (a preflighted request), reads the exposed headers, and pauses an ad (PATCH,
 * preflighted). A production allow-list is enforced by the browser itself: a page on an origin not
 * listed cannot read a response.
 */

// ethers' own browser bundle: the page's wallet is the library a dApp ships.
const ETHERS_UMD = readFileSync(path.join(import.meta.dirname, '..', '..', 'node_modules', 'ethers', 'dist', 'ethers.umd.min.js'));

/** A static site on its own loopback port: another origin than the API's. */
async function servePage(): Promise<{ origin: string; server: Server }> {
  const server = createServer((req, res) => {
    if (req.url === '/ethers.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(ETHERS_UMD);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>dApp</title><script src="/ethers.js"></script>');
  });
  const port = await freeLoopbackPort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${port}`, server };
}

/** Closes a server now: the browser keeps its connections alive, and close() alone would wait for them. */
function closeServer(server: Server | undefined): Promise<unknown> {
  server?.closeAllConnections();
  return new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
}

let browser: TestBrowser;
let context: BrowserContext;
let page: Page;
let site: { origin: string; server: Server };

beforeAll(async () => {
  site = await servePage();
  browser = await launchBrowser();
  ({ context, page } = browser);
  await page.goto(`${site.origin}/`);
  await waitForPage(page, () => typeof (globalThis as any).ethers === 'object', 'the dApp page loading ethers');
});

afterAll(async () => {
  await browser?.close();
  await closeServer(site?.server);
});

describe('a dApp on another origin, in headless Chromium (development: any origin)', () => {
  let service: TestService;
  const wallet = Wallet.createRandom();
  let pendingAdId: string;
  let activeAdId: string;

  beforeAll(async () => {
    service = await startTestService();
    const route = await insertRouteWithChains(service.knex);
    pendingAdId = await insertAd(service.knex, route, { creator_address: wallet.address, base_status: 'PENDING' });
    activeAdId = await insertAd(service.knex, route, { creator_address: wallet.address });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('signs in with SIWE, lists its own pending ads with its Bearer token and pauses an ad', async () => {
    const seen = await page.evaluate(async ({ api, key }) => {
      const ethers = (globalThis as any).ethers;
      const wallet = new ethers.Wallet(key);
      const post = (path: string, body: unknown, token?: string) => fetch(`${api}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
      const challenge = await (await post('/v1/auth/challenge', { address: wallet.address, chainKind: 'EVM' })).json();
      const signature = await wallet.signMessage(challenge.message);
      const login = await (await post('/v1/auth/login', { chainKind: 'EVM', message: challenge.message, signature })).json();
      const token = login.tokens.access;

      const pending = await fetch(`${api}/v1/ads?status=PENDING`, { headers: { authorization: `Bearer ${token}` } });
      const publicList = await fetch(`${api}/v1/ads?creatorAddress=${wallet.address}`);
      return {
        origin: location.origin,
        loggedInAs: login.user.wallets[0].address,
        pending: { status: pending.status, ids: (await pending.json()).data.map((ad: any) => ad.id) },
        publicList: {
          status: publicList.status,
          ids: (await publicList.json()).data.map((ad: any) => ad.id),
          etag: publicList.headers.get('etag'),
          rateLimit: publicList.headers.get('ratelimit'),
          rateLimitPolicy: publicList.headers.get('ratelimit-policy'),
        },
      };
    }, { api: service.url, key: wallet.privateKey });
    expect(seen.origin).not.toBe(new URL(service.url).origin);
    expect(seen.loggedInAs).toBe(wallet.address);
    expect(seen.pending).toEqual({ status: 200, ids: [pendingAdId] });
    expect(seen.publicList).toMatchObject({ status: 200, ids: [activeAdId], etag: expect.stringMatching(/^W\//) });
    expect(seen.publicList.rateLimit).toMatch(/r=\d+/);
    expect(seen.publicList.rateLimitPolicy).toMatch(/q=\d+/);

    const patched = await page.evaluate(async ({ api, key, adId }) => {
      const ethers = (globalThis as any).ethers;
      const wallet = new ethers.Wallet(key);
      const json = { 'content-type': 'application/json' };
      const challenge = await (await fetch(`${api}/v1/auth/challenge`, { method: 'POST', headers: json, body: JSON.stringify({ address: wallet.address, chainKind: 'EVM' }) })).json();
      const login = await (await fetch(`${api}/v1/auth/login`, {
        method: 'POST', headers: json,
        body: JSON.stringify({ chainKind: 'EVM', message: challenge.message, signature: await wallet.signMessage(challenge.message) }),
      })).json();
      const response = await fetch(`${api}/v1/ads/${adId}/update`, {
        method: 'PATCH', headers: { ...json, authorization: `Bearer ${login.tokens.access}` }, body: JSON.stringify({ status: 'PAUSED' }),
      });
      return { status: response.status, body: await response.json() };
    }, { api: service.url, key: wallet.privateKey, adId: activeAdId });
    expect(patched).toMatchObject({ status: 200, body: { id: activeAdId, status: 'PAUSED' } });
  });
});

describe('a production allow-list, enforced by the browser', () => {
  let api: Server;
  let apiUrl: string;
  let other: { origin: string; server: Server };

  beforeAll(async () => {
    other = await servePage();
    // The policy alone in front of one route: what it lets a browser read is the point here.
    const app = express();
    app.use(corsPolicy({ NODE_ENV: 'production', CORS_ORIGINS: [site.origin] }));
    app.get('/v1/chains', (_req, res) => { res.json({ data: [], nextCursor: null }); });
    const port = await freeLoopbackPort();
    api = await new Promise<Server>((resolve) => { const s = app.listen(port, '127.0.0.1', () => resolve(s)); });
    apiUrl = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await closeServer(api);
    await closeServer(other?.server);
  });

  const tryFetch = (target: Page, url: string) => target.evaluate(async (u) => {
    try {
      const response = await fetch(u, { headers: { authorization: 'Bearer x' } });
      return { status: response.status };
    } catch (error) {
      return { failed: String(error) };
    }
  }, url);

  it('lets a listed origin read the response and refuses one that is not listed', async () => {
    expect(await tryFetch(page, `${apiUrl}/v1/chains`)).toEqual({ status: 200 });
    const stranger = await context.newPage();
    await stranger.goto(`${other.origin}/`);
    expect(await tryFetch(stranger, `${apiUrl}/v1/chains`)).toEqual({ failed: expect.stringMatching(/Failed to fetch/) });
    await stranger.close();
  });
});
