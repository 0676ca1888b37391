import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AD_CHAIN, ORDER_CHAIN, signOrderHash, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import { startServed, stop, type Served } from '../support/local-stack.ts';
import type { TestService } from '../support/service.ts';
import { expectWholeTradeSteps, stepOf } from '../support/pushed-stream.ts';
import { openSse, type SseMessage } from '../support/sse-client.ts';
import { describeOnEachOrchestrator, startScene, type Scene } from '../support/scene.ts';
import { call } from '../support/wallets.ts';

/**
 * Pushed status on a whole trade on the devnet, on each orchestrator (on Temporal the webhooks are
 * delivered by the worker process), with two API processes over one database (this
 * one, and `npm run api` as a separate process): the trade's server-sent events arrive in order with
 * no gap, across a reconnect to the other process with Last-Event-ID; and the trade settles driven
 * by the parties' bots, which act on signed webhooks alone (verified with `standardwebhooks`); a
 * third receiver, down for the whole trade, gets every event once it is up, in order.
 */

const { makerKey, bridgerKey, maker, bridger } = tradeParties();
/** Webhook retries 1-2 s apart, in every process that delivers. */
const RETRIES = { WEBHOOK_RETRY_BASE_SECONDS: '1', WEBHOOK_RETRY_MAX_SECONDS: '2' };

describeOnEachOrchestrator('pushed status on a whole trade', (orchestrator) => {
  let scene: Scene;
  let service: TestService;
  let other: Served & { url?: string };
  let devnet: DevnetClient;
  let makerToken: string;
  let bridgerToken: string;
  let routeId: string;

  beforeAll(async () => {
    scene = await startScene({ orchestrator, env: RETRIES });
    ({ service, devnet, makerToken, bridgerToken, routeId } = scene);
    // The second API replica: its own process, pool, LISTEN connection and webhook deliverer. It gets
    // the same retry settings: on the embedded orchestrator it delivers too, and an attempt it made on
    // the default backoff (5 s doubling, up to an hour) would put the tracker's next try past the wait.
    other = await startServed('api', {
      ...RETRIES, NODE_ENV: 'test', DATABASE_URL: service.db.url, DATA_DIR: service.config.DATA_DIR, PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0',
      LOG_LEVEL: 'info', RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000', PROVER_POOL_SIZE: '1',
      // On the scene's orchestrator: embedded (no Temporal), or the scene's namespace of the dev server.
      TEMPORAL_ADDRESS: scene.temporal?.address ?? '', ...(scene.temporal ? { TEMPORAL_NAMESPACE: scene.temporal.namespace } : {}),
    });
  }, 240_000);

  afterAll(async () => {
    await stop(other);
    await scene?.close();
  });

  /**
   * A party's bot: an HTTP receiver that verifies each delivery with `standardwebhooks` (a bad
   * signature is refused and fails the test) and hands the event to `react`, one at a time, in order.
   * While `down` it answers 503 to everything, as a receiver that is not up.
   */
  async function bot(react: (event: { type: string; data: any }) => Promise<void>) {
    const state = { secret: '', down: false, refused: 0, events: [] as Array<{ type: string; data: any }>, failures: [] as string[] };
    let queue = Promise.resolve();
    const server: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => { body += chunk; });
      req.on('end', () => {
        if (state.down) {
          state.refused++;
          res.statusCode = 503;
          res.end();
          return;
        }
        let event: { type: string; data: any };
        try {
          event = new Webhook(state.secret).verify(body, req.headers as Record<string, string>) as typeof event;
        } catch (error) {
          state.failures.push(`unverified delivery: ${(error as Error).message}`);
          res.statusCode = 400;
          res.end();
          return;
        }
        res.statusCode = 204;
        res.end();
        state.events.push(event);
        queue = queue.then(() => react(event)).catch((error: unknown) => { state.failures.push(`${event.type}: ${(error as Error).stack}`); });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return Object.assign(state, {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/relayer-events`,
      close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
    });
  }

  const ok = async (response: Promise<{ status: number; body: any }>) => {
    const answer = await response;
    if (answer.status < 200 || answer.status > 299) throw new Error(`${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };

  describe('pushed status on a whole trade', () => {
    it('settles driven by bots that only react to webhooks, while its events stream in order with no gap across two API processes; a receiver down meanwhile gets them all later', async () => {
      // The Maker's bot locks when the deposit is confirmed and sends the ad-side unlock when it is due.
      const makerHashes = new Map<string, string>();
      const makerBot = await bot(async ({ type, data }) => {
        if (type === 'trade.status_changed' && data.status === 'DEPOSITED') {
          const lock = await ok(call(service, 'POST', `/v1/trades/${data.tradeId}/lock`, undefined, makerToken));
          makerHashes.set(data.tradeId, lock.orderHash);
          const tx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock, { orderParams: lock.orderParams });
          await ok(call(service, 'POST', `/v1/trades/${data.tradeId}/confirm`, { txHash: tx }, makerToken));
        }
        if (type === 'trade.unlock_due' && data.unlockDue === 'MAKER') {
          const unlock = await ok(call(service, 'POST', `/v1/trades/${data.tradeId}/unlock`, { signature: signOrderHash(makerKey!.privateKey, makerHashes.get(data.tradeId)!) }, makerToken));
          const tx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'unlock', unlock, unlock);
          await ok(call(service, 'POST', `/v1/trades/${data.tradeId}/unlock/confirm`, { txHash: tx }, makerToken));
        }
      });
      // The Bridger's bot sends the order-side unlock when it is due (the order hash is from the Bridger's own create).
      const hashes = new Map<string, string>();
      const bridgerBot = await bot(async ({ type, data }) => {
        if (type === 'trade.unlock_due' && data.unlockDue === 'BRIDGER') {
          const unlock = await ok(call(service, 'POST', `/v1/trades/${data.tradeId}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, hashes.get(data.tradeId)!) }, bridgerToken));
          const tx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'unlock', unlock, unlock);
          await ok(call(service, 'POST', `/v1/trades/${data.tradeId}/unlock/confirm`, { txHash: tx }, bridgerToken));
        }
      });
      makerBot.secret = (await ok(call(service, 'POST', '/v1/webhooks', { url: makerBot.url, description: 'maker bot' }, makerToken))).secret;
      bridgerBot.secret = (await ok(call(service, 'POST', '/v1/webhooks', { url: bridgerBot.url, description: 'bridger bot' }, bridgerToken))).secret;
      // A second receiver of the Bridger's (a wallet tracker), down for the whole trade.
      const tracker = await bot(async () => undefined);
      tracker.down = true;
      tracker.secret = (await ok(call(service, 'POST', '/v1/webhooks', { url: tracker.url, description: 'tracker' }, bridgerToken))).secret;

      // The Maker's ad, and the Bridger's trade and deposit: the only steps not taken by a bot.
      const created = await ok(call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '1000' }, makerToken));
      await devnet.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', 1000n);
      await ok(call(service, 'POST', `/v1/ads/${created.adId}/confirm`, { txHash: await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', created) }, makerToken));
      await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
      const { tradeId, reqContractDetails: order } = await ok(call(service, 'POST', '/v1/trades/create', { adId: created.adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken));
      hashes.set(tradeId, order.orderHash);

      // A dApp watches the trade on the other API process.
      const first = await openSse(`${other.url}/v1/trades/${tradeId}/events`);
      expect(first.status).toBe(200);
      const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
      await ok(call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken));
      // Its connection drops after the deposit; it comes back on this process with the last id it saw.
      await first.waitFor(2);
      first.abort();
      const seen = first.messages.length;
      const resumed = await openSse(`${service.url}/v1/trades/${tradeId}/events`, { 'last-event-id': String(first.messages[seen - 1]!.id) });
      await resumed.ended; // ends after SETTLED
      expect(makerBot.failures).toEqual([]);
      expect(bridgerBot.failures).toEqual([]);
      expect((await call(service, 'GET', `/v1/trades/${tradeId}`)).body).toMatchObject({ status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true });

      const stream: SseMessage[] = [...first.messages, ...resumed.messages];
      expect(stream.map((m) => m.id)).toEqual(stream.map((_, i) => i + 1)); // in order, no gap, no repeat
      // The proof and the lock race; the unlocks follow the unlock order.
      expectWholeTradeSteps(stream.map(stepOf));
      expect(stream[0]!.data.data).toMatchObject({ routeId, amount: '100', orderAmount: '100', adAmount: '100', adCreatorAddress: maker.address, bridgerAddress: bridger.address });
      // A fresh replay from either process is the same stream.
      const replay = await openSse(`${other.url}/v1/trades/${tradeId}/events?lastEventId=0`);
      await replay.ended;
      expect(replay.messages.map((m) => [m.id, m.event])).toEqual(stream.map((m) => [m.id, m.event]));

      // Each bot received its user's events in order, every one verified: the Maker's ad confirmation and the whole trade.
      await expect.poll(() => bridgerBot.events.length, { timeout: 30_000 }).toBe(stream.length);
      expect(bridgerBot.events.map((e) => e.type)).toEqual(stream.map((m) => m.event));
      await expect.poll(() => makerBot.events.length, { timeout: 30_000 }).toBe(stream.length + 1);
      expect(makerBot.events.map((e) => e.type)).toEqual(['ad.confirmed', ...stream.map((m) => m.event)]);

      // The tracker, refused every attempt so far, comes up: it gets every event of the trade later, in order, each verified once.
      expect(tracker.refused).toBeGreaterThan(0);
      expect(tracker.events).toEqual([]);
      tracker.down = false;
      // Retries are 1-2 s apart here in both processes; the margin is for a loaded CI machine.
      await expect.poll(() => tracker.events.length, { timeout: 90_000 }).toBe(stream.length);
      expect(tracker.events.map((e) => [e.type, e.data])).toEqual(stream.map((m) => [m.event, m.data.data]));
      expect(tracker.failures).toEqual([]);
      await tracker.close();
      await makerBot.close();
      await bridgerBot.close();
    }, 300_000);
  });
});
