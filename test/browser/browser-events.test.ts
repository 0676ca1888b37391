import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PushedEventData } from '../../domain/index.ts';
import { appendPushedEvents } from '../../db/repositories/pushed-events.ts';
import { freeLoopbackPort } from '../../entrypoints/free-port.ts';
import { launchBrowser, waitForPage, type TestBrowser } from '../support/browser.ts';
import { insertAd, insertRouteWithChains, insertTrade, type RouteFixture } from '../support/fixtures.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { loginEvm, newEvmAccount } from '../support/wallets.ts';

/**
 * The user's event stream in a real browser (Debian chromium, headless) on a page of another
 * origin (issue 29): a stock `EventSource` cannot send an Authorization header, so the page asks
 * POST /v1/events/ticket with its Bearer token and opens `new EventSource(url + '?ticket=...')`.
 * The API is reached through a TCP relay the test cuts, as a network drop would: EventSource's own
 * reconnect resends the spent ticket (401, and it stops), so the page takes a new ticket and
 * resumes after the last id, missing and repeating nothing. The client package's `followEvents`
 * (client/events.js, loaded as the page's module) does the same on its own, and `followTrade`
 * stops at the trade's terminal status having seen every claim.
 */

let service: TestService;
let knex: Knex;
let proxy: TcpProxy;
let api: string;
let browser: TestBrowser;
let site: Server;
let route: RouteFixture;
let adId: string;

beforeAll(async () => {
  service = await startTestService({ SSE_HEARTBEAT_SECONDS: '1', WEBHOOK_SWEEP_SECONDS: '3600' });
  knex = service.knex;
  route = await insertRouteWithChains(knex);
  adId = await insertAd(knex, route);
  const target = new URL(service.url);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
  api = `http://${proxy.address}`;
  const files: Record<string, [string, Buffer]> = {
    '/events.js': ['text/javascript', readFileSync(new URL('../../client/events.js', import.meta.url))],
    '/': ['text/html', Buffer.from('<!doctype html><title>dApp</title><script type="module">import * as events from "/events.js"; window.relayerEvents = events;</script>')],
  };
  site = createServer((req, res) => {
    const [type, body] = files[req.url ?? ''] ?? ['text/plain', Buffer.from('not found')];
    res.writeHead(files[req.url ?? ''] ? 200 : 404, { 'content-type': type }).end(body);
  });
  const port = await freeLoopbackPort();
  await new Promise<void>((resolve) => site.listen(port, '127.0.0.1', resolve));
  browser = await launchBrowser();
  await browser.page.goto(`http://127.0.0.1:${port}/`);
  await waitForPage(browser.page, () => typeof (globalThis as any).relayerEvents === 'object', 'the dApp page loading the client\'s events.js');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  site?.closeAllConnections();
  await new Promise((resolve) => (site ? site.close(resolve) : resolve(undefined)));
  await proxy?.close();
  await service?.close();
});

const deposited = (tradeId: string): PushedEventData => ({
  type: 'trade.status_changed',
  data: { tradeId, adId, status: 'DEPOSITED', previousStatus: 'PENDING', proofReady: false, bridgerClaimed: false, adCreatorClaimed: false, unlockDue: null },
});
/** Commits one event about a new trade to `address`'s feed; returns the trade id. */
async function publish(address: string): Promise<string> {
  const tradeId = await insertTrade(knex, route, adId);
  await knex.transaction((trx) => appendPushedEvents(trx, { tradeId, adId, recipients: [address], events: [deposited(tradeId)] }));
  return tradeId;
}
type Seen = { id: number; tradeId: string }[];
const seen = (): Promise<Seen> => browser.page.evaluate(() => (globalThis as any).seen as Seen);

describe('the user stream in headless Chromium, from another origin', () => {
  it('opens with a ticket in a stock EventSource, and after a dropped connection resumes with a new ticket and the last id, missing and repeating nothing', async () => {
    const user = newEvmAccount();
    const token = (await loginEvm(service, user)).body.tokens.access;
    const first = await publish(user.address);
    const opened = await browser.page.evaluate(async ({ api, token }) => {
      const g = globalThis as any;
      g.seen = [];
      g.opens = [];
      let last = 0;
      const connect = async (): Promise<void> => {
        try {
          const asked = await fetch(`${api}/v1/events/ticket`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
          const { ticket } = await asked.json();
          const source = new EventSource(`${api}/v1/events?ticket=${encodeURIComponent(ticket)}${last ? `&lastEventId=${last}` : ''}`);
          g.opens.push({ ticketStatus: asked.status, after: last });
          source.addEventListener('trade.status_changed', (message: MessageEvent) => {
            last = Number(message.lastEventId);
            g.seen.push({ id: last, tradeId: JSON.parse(message.data).data.tradeId });
          });
          // EventSource retries by itself with the same URL (and Last-Event-ID): the spent ticket is refused and it
          // gives up (CLOSED). Then: a new ticket, resuming after the last id seen.
          source.onerror = () => { if (source.readyState === EventSource.CLOSED) setTimeout(connect, 200); };
        } catch {
          setTimeout(connect, 500); // the network is down: try again
        }
      };
      await connect();
      return { origin: location.origin };
    }, { api, token });
    expect(opened.origin).not.toBe(new URL(api).origin);
    await expect.poll(seen, { timeout: 10_000 }).toEqual([{ id: 1, tradeId: first }]);
    const second = await publish(user.address);
    await expect.poll(seen, { timeout: 10_000 }).toHaveLength(2);

    // The network drops every connection; an event commits while the page is away.
    proxy.cut();
    const third = await publish(user.address);
    proxy.restore();
    const fourth = await publish(user.address);
    await expect.poll(seen, { timeout: 20_000, message: 'the events committed while the page was away, after it resumed' }).toHaveLength(4);
    // No repeat: one more event, and the stream (in order) has carried nothing else before it.
    const fifth = await publish(user.address);
    await expect.poll(async () => (await seen()).some((event) => event.tradeId === fifth), { timeout: 20_000, message: 'the fifth event, after which a repeat would have shown' }).toBe(true);
    expect(await seen()).toEqual([{ id: 1, tradeId: first }, { id: 2, tradeId: second }, { id: 3, tradeId: third }, { id: 4, tradeId: fourth }, { id: 5, tradeId: fifth }]);
    const opens = await browser.page.evaluate(() => (globalThis as any).opens as { ticketStatus: number; after: number }[]);
    expect(opens[0]).toEqual({ ticketStatus: 200, after: 0 });
    expect(opens.at(-1)).toEqual({ ticketStatus: 200, after: 2 });
    // One ticket spent per stream opened (EventSource's own retry with the spent one was refused).
    expect(Number((await knex('event_stream_tickets').whereNotNull('used_at').count('* as count'))[0]!.count)).toBe(opens.length);
    await browser.page.evaluate(() => location.reload());
    await waitForPage(browser.page, () => typeof (globalThis as any).relayerEvents === 'object', 'the dApp page loading the client\'s events.js');
  }, 60_000);

  it('followEvents (the client package) does it on its own: a ticket per connection, resume after a drop, a refreshed token on reconnect', async () => {
    const wallet = newEvmAccount();
    const token = (await loginEvm(service, wallet)).body.tokens.access;
    const first = await publish(wallet.address);
    await browser.page.evaluate(({ api, token }) => {
      const g = globalThis as any;
      g.seen = [];
      g.reconnects = [];
      g.tokenAsked = 0;
      g.follow = new AbortController();
      g.followed = g.relayerEvents.followEvents({
        baseUrl: api,
        getAccessToken: () => { g.tokenAsked += 1; return token; },
        onEvent: (event: any) => { g.seen.push({ id: event.id, tradeId: event.data.data.tradeId }); },
        onReconnect: (info: unknown) => { g.reconnects.push(info); },
        retryMs: 200,
        signal: g.follow.signal,
      });
    }, { api, token });
    await expect.poll(seen, { timeout: 10_000 }).toEqual([{ id: 1, tradeId: first }]);
    proxy.cut();
    const second = await publish(wallet.address);
    // The drop noticed (a reconnect under way, after event 1) before the network comes back.
    await expect.poll(() => browser.page.evaluate(() => (globalThis as any).reconnects.length as number), { timeout: 20_000, message: 'followEvents noticing the dropped connection (onReconnect)' })
      .toBeGreaterThanOrEqual(1);
    proxy.restore();
    const third = await publish(wallet.address);
    await expect.poll(seen, { timeout: 20_000 }).toHaveLength(3);
    const end = await browser.page.evaluate(async () => {
      const g = globalThis as any;
      g.follow.abort();
      return { end: await g.followed, reconnects: g.reconnects, tokenAsked: g.tokenAsked, transport: typeof EventSource };
    });
    expect(await seen()).toEqual([{ id: 1, tradeId: first }, { id: 2, tradeId: second }, { id: 3, tradeId: third }]);
    expect(end.end).toEqual({ lastEventId: 3, reason: 'aborted' });
    expect(end.reconnects.length).toBeGreaterThanOrEqual(1);
    expect(end.reconnects[0]).toMatchObject({ lastEventId: 1 });
    expect(end.tokenAsked).toBeGreaterThanOrEqual(2); // a new ticket, asked with the token as it is now
  }, 60_000);
});
