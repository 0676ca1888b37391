import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TemporalOrchestrator } from '../../workflows/temporal/client.ts';
import { tradeWorkflowId } from '../../workflows/temporal/workflows.ts';
import type { InterfaceAbi } from 'ethers';
import { evmContractCall } from '../../chains/evm/call-args.ts';
import {
  AD_CHAIN, eventually, explainRevert, mined, ORDER_CHAIN, signOrderHash, tradeParties, withGasHeadroom, type DevnetClient,
} from '../support/devnet-client.ts';
import { expectWholeTradeSteps, stepName, stepOf } from '../support/pushed-stream.ts';
import { stopped, type ServiceProcess } from '../support/temporal-stack.ts';
import type { TestService } from '../support/service.ts';
import { openSse } from '../support/sse-client.ts';
import { describeOnEachOrchestrator, startScene, type Scene } from '../support/scene.ts';
import { call, loginEvm } from '../support/wallets.ts';

/**
 * Whole trades through HTTP on the two-chain devnet, on each orchestrator (test/support/scene.ts):
 * the Maker's ad on chain 31338, the Bridger's deposit on 31337, the lock, both unlocks with a real
 * proof, and the contracts paying out; the expiry path; and concurrent creates against one ad.
 *
 * Temporal only (a real `temporal server start-dev`, the API in this process, `npm run worker` and
 * `npm run prover` as OS processes over the same database): the prover that takes the proof is
 * killed with SIGKILL mid-proof and another finishes it; the worker is killed and a new one picks
 * the workflow up where it was; the search attributes answer the operators' `temporal workflow
 * list --query` lines; the Maker's webhooks are delivered by the worker process (the Temporal
 * mode's pg-boss home), in order and signed. The Bridger-alone settlement and the lock released
 * after lockExpiry, which the Temporal twin of this file also ran, are in bridger-unlock.test.ts and
 * lock-release.test.ts, on both orchestrators.
 */

const { makerKey, bridgerKey, maker, bridger } = tradeParties();
const root = new URL('../..', import.meta.url).pathname;

describeOnEachOrchestrator('whole trades on the two-chain devnet', (orchestrator) => {
  let scene: Scene;
  let service: TestService;
  let devnet: DevnetClient;
  let makerToken: string;
  let bridgerToken: string;
  let routeId: string;

  const trade = async (id: string) => (await call(service, 'GET', `/v1/trades/${id}`)).body;
  const adOf = async (id: string) => (await call(service, 'GET', `/v1/ads/${id}`)).body;

  const createAd: Scene['createAd'] = (...args) => scene.createAd(...args);

  beforeAll(async () => {
    // One Bridger makes every trade of this file (50 at once below): no per-wallet cap in the way here.
    scene = await startScene({ orchestrator, env: { METRICS_PORT: '0', METRICS_SAMPLE_SECONDS: '1', MAX_OPEN_RESERVATIONS_PER_WALLET: '1000', MAX_OPEN_RESERVATIONS_PER_AD: '1000' } });
    ({ service, devnet, makerToken, bridgerToken, routeId } = scene);
  }, 240_000);

  afterAll(async () => {
    await scene?.close();
  });

  // First in the Temporal run, so the Maker's webhook sees this trade alone and the provers prove nothing else.
  if (orchestrator === 'temporal') {
    describe('Temporal only: a prover dies mid-proof, the worker is killed and restarted (separate worker and prover processes)', () => {
      it('settles on both chains: the other prover finishes the proof, the new worker takes the workflow on; the search attributes, the history and the worker\'s webhooks say so', async () => {
        const temporal = scene.temporal!;
        const { listWorkflows } = temporal;
        // A second prover beside the scene's: the one that takes the proof is killed, the other finishes it.
        const provers = [...temporal.provers, await temporal.start('prover')];
        const metricsOf = async (proc: ServiceProcess) => (await fetch(proc.metricsUrl)).text();

        // The Maker's webhook receiver: with Temporal, the worker process delivers webhooks (pg-boss there).
        const deliveries: Array<{ id: string; body: string; headers: Record<string, string> }> = [];
        const receiver = createServer((req, res) => {
          let body = '';
          req.on('data', (chunk) => { body += chunk; });
          req.on('end', () => {
            deliveries.push({ id: String(req.headers['webhook-id']), body, headers: req.headers as Record<string, string> });
            res.statusCode = 204;
            res.end();
          });
        });
        await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
        const hook = await call(service, 'POST', '/v1/webhooks', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` }, makerToken);
        expect(hook.status).toBe(201);

        const ad = await call(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '1000' }, makerToken);
        await devnet.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', 1000n);
        const adTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', ad.body);
        expect((await call(service, 'POST', `/v1/ads/${ad.body.adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);
        const adId: string = ad.body.adId;

        // Create (the Bridger approved the deposit first: the service checks the allowance): the workflow `trade-<id>` starts, indexed by AdId and RouteId.
        await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
        const created = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
        expect(created.status).toBe(200);
        const { tradeId, reqContractDetails: order } = created.body;
        const workflowId = tradeWorkflowId(tradeId);
        expect(await eventually('indexed', () => listWorkflows(`AdId='${adId}' AND RouteId='${routeId}' AND ExecutionStatus='Running'`), (ids) => ids.length > 0, 15_000)).toEqual([workflowId]);

        // A transaction that is not this order's: 422, nothing changes.
        const wrong = await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: adTx }, bridgerToken);
        expect(wrong.status).toBe(422);
        expect((await call(service, 'GET', `/v1/trades/${tradeId}`, undefined, bridgerToken)).body.status).toBe('PENDING');

        // Deposit and confirm: the API verifies and applies it, the workflow is signalled; the proof goes to the proofs queue.
        const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
        expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).body).toEqual({ tradeId, success: true, duplicate: false });
        expect((await call(service, 'GET', `/v1/trades/${tradeId}`, undefined, bridgerToken)).body.status).toBe('DEPOSITED');
        expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);

        // The prover that took the proof dies mid-proof (SIGKILL); the other finishes it once its heartbeat times out.
        const busy = await eventually('a busy prover', async () => {
          for (const p of provers) if (/relayer_prover_busy_workers 1/.test(await metricsOf(p))) return p;
          return undefined;
        }, (p) => p !== undefined, 60_000);
        await stopped(busy!.child);
        const survivor = provers.find((p) => p !== busy)!;
        temporal.provers = [survivor];
        const proved = await eventually('proof-ready', () => service.knex('trades').where({ id: tradeId }).first('status', 'proof_state', 'proof'), (r) => r.proof_state === 'ready', 90_000);
        expect(proved.status).toBe('DEPOSITED');
        expect(proved.proof.publicSignals).toHaveLength(4);
        const survivorMetrics = await metricsOf(survivor);
        expect(survivorMetrics).toMatch(/relayer_prover_proofs_total\{[^}]*\} [1-9]|relayer_prover_\w+_count [1-9]/);
        // Temporal's own metrics are forwarded on the same /metrics.
        expect(survivorMetrics).toMatch(/^temporal_\w+/m);

        // The worker is killed and a new one takes over: the lock confirm is answered by the new worker.
        expect(await stopped(temporal.worker.child)).toBe(null);
        temporal.worker = await temporal.start('worker');
        const lock = await call(service, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
        expect(lock.status).toBe(200);
        const lockTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
        expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken)).status).toBe(200);
        expect((await call(service, 'GET', `/v1/trades/${tradeId}`, undefined, makerToken)).body.status).toBe('LOCKED');
        // The API answered LOCKED from the database; the lock's follow-up (cancel the lock window's timer)
        // changes nothing the workflow does, so it is not signalled: the new worker's first task is the end's.

        // Both unlocks with the proof; the contracts pay out.
        const makerUnlock = await call(service, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(makerKey!.privateKey, order.orderHash) }, makerToken);
        expect(makerUnlock.status).toBe(200);
        const bridgerBefore = await devnet.balanceOf(AD_CHAIN, bridger.address);
        const adUnlockTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'unlock', makerUnlock.body, makerUnlock.body);
        expect((await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlockTx }, makerToken)).status).toBe(200);
        expect(await devnet.balanceOf(AD_CHAIN, bridger.address)).toBe(bridgerBefore + 100n);

        const bridgerUnlock = await call(service, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, order.orderHash) }, bridgerToken);
        expect(bridgerUnlock.status).toBe(200);
        const makerBefore = await devnet.balanceOf(ORDER_CHAIN, maker.address);
        const orderUnlockTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'unlock', bridgerUnlock.body, bridgerUnlock.body);
        expect((await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, bridgerToken)).status).toBe(200);
        expect(await devnet.balanceOf(ORDER_CHAIN, maker.address)).toBe(makerBefore + 100n);
        expect((await call(service, 'GET', `/v1/trades/${tradeId}`, undefined, bridgerToken)).body).toMatchObject({ status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true });
        expect((await call(service, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ poolAmount: '1000', availableAmount: '900', lockedAmount: '0' });
        // The workflow closes at the end (no linger), its final status indexed; its first task after the
        // worker's death waits out the dead worker's sticky queue: within seconds, more on a loaded machine.
        expect(await eventually('indexed SETTLED', () => listWorkflows(`TradeStatus='SETTLED' AND RouteId='${routeId}' AND ExecutionStatus='Completed'`), (ids) => ids.length > 0, 120_000)).toEqual([workflowId]);
        // A repeated confirm of the closed trade is a duplicate, answered 200 from the database; the deposit counted once.
        expect((await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, makerToken)).body).toEqual({ tradeId, success: true, duplicate: true });
        expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).body).toEqual({ tradeId, success: true, duplicate: true });
        expect(Number((await service.knex('chain_events').where({ subject_id: tradeId, event: 'OrderCreated' }).count({ n: '*' }))[0]!.n)).toBe(1);
        expect(await (service.container.orchestrator() as TemporalOrchestrator).workflowStatus(tradeId)).toBe('COMPLETED');

        // The history shows it: generateProof's first attempt timed out on its heartbeat, the second completed.
        const history = await (service.container.orchestrator() as TemporalOrchestrator).client.workflow.getHandle(workflowId).fetchHistory();
        const retried = history.events!.filter((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 0) > 1);
        expect(retried).toHaveLength(1);
        expect(retried[0]!.activityTaskStartedEventAttributes!.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(4); // TIMEOUT_TYPE_HEARTBEAT
        if (process.env.RECORD_HISTORIES === '1') {
          mkdirSync(path.join(root, 'workflows/temporal/histories/v4'), { recursive: true });
          writeFileSync(path.join(root, 'workflows/temporal/histories/v4/devnet-settled-prover-killed.json'), `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 1)}\n`);
        }

        // Every event of the Maker's stream reached the receiver in order, signed (a delivery repeated after the worker's SIGKILL carries the same id).
        const verifier = new Webhook(hook.body.secret);
        const unique = await eventually('webhooks delivered', async () => [...new Map(deliveries.map((d) => [d.id, d])).values()],
          (list) => list.some((d) => /"status":"SETTLED"/.test(d.body) && /trade.claimed/.test(d.body)), 60_000);
        const events = unique.map((d) => verifier.verify(d.body, d.headers) as { type: string; data: any });
        expect(events[0]).toMatchObject({ type: 'ad.confirmed', data: { adId, action: 'createAd' } });
        // Each once, in the trade's order: none lost or repeated though the worker delivering them was killed.
        expectWholeTradeSteps(events.slice(1).map(stepName));
        expect(events.slice(1).every((e) => e.data.tradeId === tradeId)).toBe(true);
        // The receiver goes away: its endpoint with it, so the worker does not retry deliveries to it under the next tests.
        expect((await service.request(`/v1/webhooks/${hook.body.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${makerToken}` } })).status).toBe(204);
        await new Promise<void>((resolve) => { receiver.closeAllConnections(); receiver.close(() => resolve()); });

        // SIGTERM stops a worker and a prover gracefully (exit 0); the next tests get a fresh pair.
        expect(await stopped(temporal.worker.child, 'SIGTERM')).toBe(0);
        expect(await stopped(survivor.child, 'SIGTERM')).toBe(0);
        [temporal.worker, ...temporal.provers] = await Promise.all([temporal.start('worker'), temporal.start('prover')]);
      }, 300_000);
    });
  }

  describe('a whole trade', () => {
    it('settles on both chains: deposit, proof, lock, both unlocks, and the contracts pay out', async () => {
      const adId = await createAd(1000n);
      // Step 1: the Bridger approves the OrderPortal for the deposit (the service checks it) and creates the trade.
      await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
      const created = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
      expect(created.status).toBe(200);
      const { tradeId, reqContractDetails: order } = created.body;
      expect(order).toMatchObject({ chainId: ORDER_CHAIN, chainKind: 'EVM', contractAddress: service.devnet!.deployments[ORDER_CHAIN]!.orderPortal });
      expect(order.orderParams).toMatchObject({ amount: '100', bridger: bridger.address, orderRecipient: maker.address, adRecipient: bridger.address, adId });
      expect(await trade(tradeId)).toMatchObject({ status: 'PENDING', amount: '100', bridgerClaimed: false, adCreatorClaimed: false });
      expect(await adOf(adId)).toMatchObject({ availableAmount: '900', lockedAmount: '100' });
      expect((await call(service, 'GET', `/v1/trades/${tradeId}/params`, undefined, bridgerToken)).body).toEqual({ ...order.orderParams, orderHash: order.orderHash });

      // Nothing before its time: no lock before the deposit, no unlock before the lock.
      expect((await call(service, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken)).status).toBe(409);
      expect((await call(service, 'POST', `/v1/trades/${tradeId}/lock`, undefined, bridgerToken)).status).toBe(403);

      // Step 2-3: the Bridger deposits on the order chain and confirms; the proof starts.
      const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
      expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).body).toEqual({ tradeId, success: true, duplicate: false });
      expect((await trade(tradeId)).status).toBe('DEPOSITED');
      expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).body).toEqual({ tradeId, success: true, duplicate: true });
      // The deposit is not an unlock: reported through the other endpoint it is refused, nothing changes.
      const wrongKind = await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: depositTx }, bridgerToken);
      expect(wrongKind.status).toBe(422);
      expect(JSON.stringify(wrongKind.body.message)).toMatch(/not an unlock/);
      expect((await trade(tradeId)).status).toBe('DEPOSITED');

      // Step 4: the Maker locks on the ad chain.
      const lock = await call(service, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
      expect(lock.status).toBe(200);
      expect(lock.body).toMatchObject({ chainId: AD_CHAIN, orderHash: order.orderHash });
      const lockTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
      expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken)).status).toBe(200);
      expect((await trade(tradeId)).status).toBe('LOCKED');

      // Step 5: the Bridger's order-side unlock waits for the ad side; the Maker's comes once the proof is ready.
      const early = await call(service, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, order.orderHash) }, bridgerToken);
      expect(early.status).toBe(409);
      const badSig = await call(service, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, order.orderHash) }, makerToken);
      expect(badSig.status).toBe(422);
      const makerUnlock = await eventually('the proof', () => call(service, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(makerKey!.privateKey, order.orderHash) }, makerToken), (r) => r.status !== 409);
      expect(makerUnlock.status).toBe(200);
      expect(makerUnlock.body).toMatchObject({ chainId: AD_CHAIN, contractAddress: service.devnet!.deployments[AD_CHAIN]!.adManager, orderHash: order.orderHash });
      expect(makerUnlock.body.proof).toMatch(/^0x[0-9a-f]{512}$/);

      const bridgerBefore = await devnet.balanceOf(AD_CHAIN, bridger.address);
      const adUnlockTx = await devnet.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'unlock', makerUnlock.body, makerUnlock.body);
      expect((await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlockTx }, makerToken)).status).toBe(200);
      expect(await devnet.balanceOf(AD_CHAIN, bridger.address)).toBe(bridgerBefore + 100n);
      expect(await trade(tradeId)).toMatchObject({ status: 'LOCKED', bridgerClaimed: true, adCreatorClaimed: false });

      // Step 6: the Bridger's unlock on the order chain pays the Maker; the trade settles.
      const bridgerUnlock = await call(service, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, order.orderHash) }, bridgerToken);
      expect(bridgerUnlock.status).toBe(200);
      expect(bridgerUnlock.body).toMatchObject({ chainId: ORDER_CHAIN, contractAddress: order.contractAddress });
      const makerBefore = await devnet.balanceOf(ORDER_CHAIN, maker.address);
      const orderUnlockTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'unlock', bridgerUnlock.body, bridgerUnlock.body);
      expect((await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, bridgerToken)).status).toBe(200);
      expect(await devnet.balanceOf(ORDER_CHAIN, maker.address)).toBe(makerBefore + 100n);
      expect(await trade(tradeId)).toMatchObject({ status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true });
      expect(await adOf(adId)).toMatchObject({ poolAmount: '1000', availableAmount: '900', lockedAmount: '0' });
      // Repeats change nothing; another trade's transaction is refused.
      expect((await call(service, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, makerToken)).body).toEqual({ tradeId, success: true, duplicate: true });
      expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: adUnlockTx }, makerToken)).status).toBe(422);

      // The trade gauges are read every METRICS_SAMPLE_SECONDS (1 here), never at scrape time (by the API's
      // process embedded; on Temporal by the worker, the deposit-to-proof time where the proof was applied).
      const metrics = await eventually('SETTLED in the trade gauges', () => scene.tradeMetrics(), (text) => /relayer_trades\{status="SETTLED"\} [1-9]/.test(text), 30_000);
      expect(metrics).toMatch(/relayer_trade_deposit_to_proof_seconds_count [1-9]/);
    }, 180_000); // the first proof of the embedded run loads the proving key: over a minute at a load average of 30

    it('refuses a trade against your own ad, outside the bounds, or on a route that is not the ad\'s', async () => {
      const adId = await createAd(500n, { minAmount: '10', maxAmount: '200' });
      const own = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '50', bridgerDstAddress: maker.address }, makerToken);
      expect(own.status).toBe(403);
      const big = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '201', bridgerDstAddress: bridger.address }, bridgerToken);
      expect(big.status).toBe(422);
      expect(big.body.message).toEqual([expect.stringMatching(/^amount must lie within the ad's bounds \[10, 200\]/)]);
      // Which bound by code: a client tells "raise the amount" from "lower it" without reading English.
      expect(big.body.code).toBe('AMOUNT_ABOVE_MAXIMUM');
      const small = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '9', bridgerDstAddress: bridger.address }, bridgerToken);
      expect(small.body).toMatchObject({ statusCode: 422, code: 'AMOUNT_BELOW_MINIMUM' });
      expect(own.body.code).toBe('NOT_TRADE_PARTY');
      const otherRoute = (await call(service, 'GET', `/v1/routes?adChainId=${ORDER_CHAIN}`)).body.data[0].id;
      const wrong = await call(service, 'POST', '/v1/trades/create', { adId, routeId: otherRoute, amount: '50', bridgerDstAddress: bridger.address }, bridgerToken);
      expect(wrong.body).toMatchObject({ statusCode: 422, code: 'TRADE_INPUT' });
      expect((await adOf(adId)).availableAmount).toBe('500');
    });

    it('lets exactly as many of 50 concurrent creates succeed as the ad can cover', async () => {
      const adId = await createAd(1000n);
      await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
      const answers = await Promise.all(Array.from({ length: 50 }, () =>
        call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken)));
      expect(answers.filter((a) => a.status === 200)).toHaveLength(10);
      expect(answers.filter((a) => a.status === 409)).toHaveLength(40);
      expect(await adOf(adId)).toMatchObject({ availableAmount: '0', lockedAmount: '1000', status: 'EXHAUSTED' });
    });
  });

  describe('a confirmation (issue 34: one read, one transaction, no orchestrator round trip)', () => {
    it('reads its trade row once (with what is already recorded in the transaction), applies in one transaction with its follow-ups in the outbox, and the proof follows', async () => {
      const adId = await createAd(200n);
      await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
      const created = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
      const { tradeId, reqContractDetails: order } = created.body;
      const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });

      // Every statement the service's own pool runs while the confirm is answered.
      const statements: Array<{ sql: string; bindings: unknown[] }> = [];
      const listen = (query: { sql: string; bindings?: unknown[] }) => statements.push({ sql: query.sql, bindings: query.bindings ?? [] });
      const { knex } = service.container;
      knex.on('query', listen);
      try {
        expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).body).toEqual({ tradeId, success: true, duplicate: false });
      } finally {
        knex.off('query', listen);
      }
      const ofThisTrade = statements.filter((s) => /"trades"/.test(s.sql) && s.bindings.includes(tradeId));
      // Written once: the UPDATE guarded by the state read takes the row lock. Read once before it (the
      // use case's read; no second, locked read). Reads after it are the proof job's, which the
      // follow-ups started in this process meanwhile.
      const writes = ofThisTrade.filter((s) => /^update/i.test(s.sql));
      expect(writes).toHaveLength(1);
      const readsBefore = ofThisTrade.slice(0, ofThisTrade.indexOf(writes[0]!)).filter((s) => /^select/i.test(s.sql));
      expect(readsBefore.map((s) => s.sql)).toHaveLength(1);
      expect(ofThisTrade.filter((s) => /for update/i.test(s.sql))).toEqual([]);
      // "Already recorded?" is answered by that one read: no read of the chain events before the write.
      const beforeWrite = statements.slice(0, statements.indexOf(writes[0]!));
      expect(beforeWrite.filter((s) => /^select[^]*from "chain_events"/i.test(s.sql) && !/"trades"/.test(s.sql))).toEqual([]);
      // The follow-ups (cancel the reservation's timer, prove, arm the lock window) in the outbox, carried out by the runner.
      const rows = await knex('trade_follow_ups').where({ trade_id: tradeId }).orderBy('seq');
      expect(rows.map((r) => r.follow_up.type)).toEqual(expect.arrayContaining(['CANCEL_TIMER', 'PROVE', 'ARM_TIMER']));
      expect(rows.every((r) => r.carried_out_at !== null)).toBe(true);
      // The embedded runner's jobs are written inside the confirmation's transaction: no outbox mark after its commit.
      if (orchestrator === 'embedded') expect(statements.filter((s) => /^update "trade_follow_ups"/i.test(s.sql))).toEqual([]);
      // PROOF_READY and the proof in one transaction: never a stored proof with the state still running.
      const proved = await eventually('proof ready', () => knex('trades').where({ id: tradeId }).first('proof_state', 'proof'), (t) => t.proof_state === 'ready', 60_000);
      expect(proved.proof).not.toBeNull();
    });
  });

  describe('one deposit confirmed many times at once (a bot replaying the confirm, issue 34: the guarded write)', () => {
    it('applies it once: one answer not a duplicate, one chain event, one PROVE follow-up, the ad debited once', async () => {
      const adId = await createAd(300n);
      await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
      const created = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
      const { tradeId, reqContractDetails: order } = created.body;
      const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
      // Every confirm reads the PENDING row before any writes: all race for the one guarded UPDATE.
      const answers = await Promise.all(Array.from({ length: 12 }, () =>
        call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)));
      expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
      expect(answers.filter((a) => a.body.duplicate === false)).toHaveLength(1);
      const { knex } = service.container;
      expect(Number((await knex('chain_events').where({ subject_id: tradeId }).count({ n: '*' }).first())!.n)).toBe(1);
      const proves = (await knex('trade_follow_ups').where({ trade_id: tradeId })).filter((r) => r.follow_up.type === 'PROVE');
      expect(proves).toHaveLength(1);
      expect(await adOf(adId)).toMatchObject({ availableAmount: '200', lockedAmount: '100' });
      expect((await trade(tradeId)).status).toBe('DEPOSITED');
    });
  });

  describe('a deposit reorganised away', () => {
    it('is not usable for a lock: the Maker gets 409 instead of signed call data', async () => {
      const adId = await createAd(100n);
      await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 40n);
      const created = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '40', bridgerDstAddress: bridger.address }, bridgerToken);
      const { tradeId, reqContractDetails: order } = created.body;
      const orderChain = devnet.provider(ORDER_CHAIN);
      const snapshot = await orderChain.send('evm_snapshot', []);
      const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
      expect((await call(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);
      // A reorg: the deposit's block is replaced by empty ones.
      await orderChain.send('evm_revert', [snapshot]);
      for (let i = 0; i < 3; i++) await orderChain.send('evm_mine', []);
      const lock = await call(service, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
      expect(lock.status).toBe(409);
      expect(lock.body.message).toMatch(/no longer in the order chain's history/);
    });
  });

  describe('a reservation never deposited', () => {
    let short: TestService;
    beforeAll(async () => {
      // Same relayer key as the devnet's contracts trust, same chains, same orchestrator; only the reservation TTL differs (the scene's close stops it).
      short = await scene.sibling({ TRADE_RESERVATION_TTL_SECONDS: '2' });
    }, 240_000);

    it('expires when its deposit request runs out (TRADE_RESERVATION_TTL_SECONDS) with no deposit on chain, and gives the amount back to the ad', async () => {
      const makerAccess = (await loginEvm(short, maker)).body.tokens.access;
      const bridgerAccess = (await loginEvm(short, bridger)).body.tokens.access;
      const adId = await createAd(300n, {}, short, makerAccess);
      await devnet.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 120n);
      const res = await call(short, 'POST', '/v1/trades/create', { adId, routeId, amount: '120', bridgerDstAddress: bridger.address }, bridgerAccess);
      expect(res.status).toBe(200);
      expect((await call(short, 'GET', `/v1/ads/${adId}`)).body.availableAmount).toBe('180');
      // A dApp watching the trade is told of the expiry, and why, and the stream then ends by itself.
      const watching = await openSse(`${short.url}/v1/trades/${res.body.tradeId}/events`);
      await eventually('expiry', async () => (await call(short, 'GET', `/v1/trades/${res.body.tradeId}`)).body.status, (s) => s === 'EXPIRED', 40_000);
      expect((await call(short, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ availableAmount: '300', lockedAmount: '0' });
      // Its deposit request ran out with it: asked for again, 409 saying so (and when), never a new one.
      const gone = await call(short, 'GET', `/v1/trades/${res.body.tradeId}/deposit-request`, undefined, bridgerAccess);
      expect(gone.body).toMatchObject({ statusCode: 409, error: 'Conflict', code: 'DEPOSIT_REQUEST_EXPIRED', retryable: false });
      expect(gone.body.message).toBe(`the deposit request of trade ${res.body.tradeId} expired at `
        + `${new Date(Number(res.body.reqContractDetails.deadline) * 1000).toISOString()}: no deposit can be made for it now; create a new trade`);
      await watching.ended;
      expect(watching.messages.map(stepOf)).toEqual(['trade.created', 'trade.expired', 'trade.status_changed:EXPIRED']);
      expect(watching.messages[1]!.data.data).toMatchObject({ status: 'EXPIRED', reason: 'reservation' });
    });
  });

  describe('a deposit estimated while another lands (the bench:trades createOrder revert)', () => {
    it('reverts with TransferFailed() at the bare estimate (the token call starved of gas, named by replaying it with eth_call) and goes through with the headroom a dApp should add', async () => {
      const adId = await createAd(1000n);
      const key = bridgerKey!.privateKey;
      const portal = devnet.contract(ORDER_CHAIN, 'orderPortal', key);
      const deposit = async () => {
        const created = await call(service, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
        expect(created.status).toBe(200);
        const order = created.body.reqContractDetails;
        const evmCall = evmContractCall('createOrder', order, { orderParams: order.orderParams, adToken: service.devnet!.deployments[ORDER_CHAIN]!.testErc20 });
        return { fn: portal.getFunction(evmCall.functionName), args: evmCall.args, value: evmCall.value, order, tradeId: created.body.tradeId as string };
      };
      await devnet.approve(ORDER_CHAIN, key, 'orderPortal', 10n ** 6n);
      // Bring the portal's tree to a leaf index of 3 mod 4: the next index has one more trailing zero
      // bit, so inserting there writes one more subtree slot than the estimate saw.
      while ((await portal.getFunction('nextLeafIndex')()) % 4n !== 3n) {
        const filler = await deposit();
        await mined(filler.fn(...filler.args, { value: filler.value }));
      }
      const late = await deposit();
      const estimate = await late.fn.estimateGas(...late.args, { value: late.value });
      const early = await deposit();
      await mined(early.fn(...early.args, { value: early.value }));

      const failed = await late.fn(...late.args, { value: late.value, gasLimit: estimate }).then((tx: any) => tx.wait()).catch((error: any) => error.receipt?.hash as string);
      expect(failed).toMatch(/^0x[0-9a-f]{64}$/);
      const abis = ['orderPortal', 'testErc20'].map((name) => devnet.contract(ORDER_CHAIN, name as 'orderPortal', key).interface.fragments as unknown as InterfaceAbi);
      expect(await explainRevert(devnet.provider(ORDER_CHAIN), failed, abis)).toMatch(/^reverts with TransferFailed\(\) with its gas limit \d+ \(used \d+\); with no limit it succeeds/);

      // Reported to the service, the reverted transaction is refused (422 saying so) and records nothing.
      const reported = await call(service, 'POST', `/v1/trades/${late.tradeId}/confirm`, { txHash: failed }, bridgerToken);
      expect(reported.status).toBe(422);
      expect(JSON.stringify(reported.body.message)).toMatch(/reverted/);
      expect((await call(service, 'GET', `/v1/trades/${late.tradeId}`)).body.status).toBe('PENDING');

      // The same signed request is still good (a reverted transaction consumed nothing): with headroom it lands.
      await mined(late.fn(...late.args, { value: late.value, gasLimit: withGasHeadroom(estimate) }));
      expect(await portal.getFunction('orders')(late.order.orderHash)).toBe(1n);
    });
  });
});
