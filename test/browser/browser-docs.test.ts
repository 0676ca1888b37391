import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../support/browser.ts';
import { insertAd, insertRouteWithChains } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { loginEvm, newEvmAccount } from '../support/wallets.ts';

/**
 * /docs as a person meets it, in headless Chromium: Swagger UI's "Try it out" on GET /v1/ads sends
 * no filter the person did not set (it used to pre-fill every one from the examples, so the default
 * call found nothing), and once the person authorizes with a Bearer token Swagger UI sends it on
 * GET /v1/ads too (optional security), so `status=PENDING` lists their own pending ads.
 */

let service: TestService;
let browser: TestBrowser;
let page: Page;
const maker = newEvmAccount();
let activeAdId: string;
let pendingAdId: string;
let token: string;

beforeAll(async () => {
  service = await startTestService();
  const route = await insertRouteWithChains(service.knex);
  activeAdId = await insertAd(service.knex, route, { creator_address: maker.address });
  pendingAdId = await insertAd(service.knex, route, { creator_address: maker.address, base_status: 'PENDING' });
  token = (await loginEvm(service, maker)).body.tokens.access;
  browser = await launchBrowser();
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await service?.close();
});

/** Runs "Try it out" then "Execute" on GET /v1/ads (after `fill`), returning the request the page sent and its answer. */
async function tryListAds(fill: (operation: ReturnType<Page['locator']>) => Promise<void> = async () => {}) {
  const operation = page.locator('#operations-Ads-listAds');
  if (!(await operation.locator('button.try-out__btn').isVisible())) await operation.locator('.opblock-summary').first().click();
  const tryOut = operation.locator('button.try-out__btn');
  if ((await tryOut.textContent())?.trim() === 'Try it out') await tryOut.click();
  await fill(operation);
  const sent = page.waitForRequest((request: Request) => new URL(request.url()).pathname === '/v1/ads');
  await operation.locator('button.execute').click();
  const request = await sent;
  const response = (await request.response())!;
  return { url: new URL(request.url()), authorization: await request.headerValue('authorization'), status: response.status(), body: await response.json() };
}

describe('/docs in headless Chromium', () => {
  it('"Try it out" on GET /v1/ads sends no filter of its own and lists the active ads', async () => {
    await page.goto(`${service.url}/docs`);
    await page.locator('#operations-Ads-listAds').waitFor();
    const { url, authorization, status, body } = await tryListAds();
    // Only the page size may come pre-set (its documented default); no filter, no cursor.
    expect([...url.searchParams.keys()].filter((name) => name !== 'limit')).toEqual([]);
    expect(authorization).toBeNull();
    expect(status).toBe(200);
    expect(body.data.map((ad: { id: string }) => ad.id)).toEqual([activeAdId]);
  });

  it('sends the Bearer token once authorized, so status=PENDING lists the caller\'s own pending ads', async () => {
    await page.locator('.auth-wrapper button.authorize').click();
    const dialog = page.locator('.dialog-ux');
    // The dialog lists every security scheme (bearerAuth, and eventTicket for the browser stream): fill the Bearer one.
    const bearer = dialog.locator('form').filter({ hasText: 'bearerAuth' });
    await bearer.locator('input').first().fill(token);
    await bearer.locator('button.authorize').click();
    await dialog.locator('button.btn-done').first().click();
    const { url, authorization, status, body } = await tryListAds(async (operation) => {
      await operation.locator('tr[data-param-name="status"] select').selectOption('PENDING');
    });
    expect(url.searchParams.get('status')).toBe('PENDING');
    expect(authorization).toBe(`Bearer ${token}`);
    expect(status).toBe(200);
    expect(body.data.map((ad: { id: string }) => ad.id)).toEqual([pendingAdId]);
  });
});
