import { execFile, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Keypair } from '@stellar/stellar-sdk';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { Wallet } from 'ethers';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import { startDevnet, type Devnet } from '../../devnet/index.ts';
import { createKnex } from '../../db/knex.ts';
import { importRegistry } from '../../registry/import.ts';
import { start, type RunningService } from '../../entrypoints/service.ts';
import type { TemporalOrchestrator } from '../../workflows/temporal/client.ts';
import { tradeWorkflowId } from '../../workflows/temporal/workflows.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { evmTimeoutCall } from '../../chains/evm/call-args.ts';
import { AD_CHAIN, devnetClient, eventually, mined, ORDER_CHAIN, signOrderHash, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import { expectWholeTradeSteps, stepName } from '../support/pushed-stream.ts';
import { startServiceProcess, startTemporalDevServer, stopped, type ServiceProcess } from '../support/temporal-stack.ts';
import type { TestService } from '../support/service.ts';
import { call, loginEvm } from '../support/wallets.ts';

/**
 * A whole trade through HTTP on the two-chain devnet with the Temporal orchestrator, against a real
 * `temporal server start-dev` (the pinned CLI the global setup installed): the API (the service's
 * own start with TEMPORAL_ADDRESS set, in this process), one `npm run worker` and two
 * `npm run prover` processes as separate OS processes over the same database. The prover that
 * takes the proof is killed with SIGKILL mid-proof and the other one finishes it; the worker is
 * killed and a new one picks the workflow up where it was. The contracts pay out; the search
 * attributes answer the operators' `temporal workflow list --query` lines. The Maker's webhooks are
 * delivered by the worker process (the Temporal mode's pg-boss home), in order and signed.
 */

const { makerKey, bridgerKey, maker, bridger } = tradeParties();
const relayerKey = Wallet.createRandom().privateKey;
const relayerStellar = Keypair.random().secret();
const root = new URL('../..', import.meta.url).pathname;
const run = promisify(execFile);

let temporal: ChildProcess;
let temporalAddress: string;
let db: TestDatabase;
let devnet: Devnet;
let chain: DevnetClient;
let dataDir: string;
let service: RunningService;
let api: TestService;
const children = new Set<ChildProcess>();

async function startTemporal(): Promise<void> {
  const server = await startTemporalDevServer(inject('temporalCli'));
  temporal = server.process;
  temporalAddress = server.address;
}

type Proc = ServiceProcess;

/** `npm run worker` / `npm run prover` over this test's database and Temporal. */
async function startProcess(kind: 'worker' | 'prover'): Promise<Proc> {
  const proc = await startServiceProcess(kind, {
    NODE_ENV: 'test', DATABASE_URL: db.url, DATA_DIR: dataDir, TEMPORAL_ADDRESS: temporalAddress,
    RELAYER_EVM_PRIVATE_KEY: relayerKey, RELAYER_STELLAR_SECRET: relayerStellar, PROVER_POOL_SIZE: '1',
  });
  children.add(proc.child);
  return proc;
}

const killed = stopped;

const metricsOf = async (proc: Proc) => (await fetch(proc.metricsUrl)).text();

/** `temporal workflow list --query ...` as an operator types it; the workflow ids it lists. */
async function listWorkflows(query: string): Promise<string[]> {
  const { stdout } = await run(inject('temporalCli'), ['workflow', 'list', '--address', temporalAddress, '--query', query, '--output', 'json']);
  const parsed = stdout.trim() ? JSON.parse(stdout) : [];
  return (Array.isArray(parsed) ? parsed : [parsed]).map((w: any) => w.execution.workflowId);
}

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'relayer-temporal-'));
  [db, devnet] = await Promise.all([
    createTestDatabase(),
    startDevnet({ ports: [0, 0], relayerEvmAddress: new Wallet(relayerKey).address, domain: { name: 'ProofBridge', version: '1' } }),
    startTemporal(),
  ]).then(([d, n]) => [d, n] as const);
  await importRegistry(db.knex, devnet.registry);
  chain = await devnetClient(devnet.rpcUrls, devnet.deployments);

  // The API: the service itself (npm run api's start), its orchestrator Temporal because TEMPORAL_ADDRESS is set.
  const config = loadConfig({
    NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: db.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000', RELAYER_EVM_PRIVATE_KEY: relayerKey, RELAYER_STELLAR_SECRET: relayerStellar,
    TEMPORAL_ADDRESS: temporalAddress,
  });
  service = await start(config, pino({ level: 'silent' }));
  api = { request: (p: string, init?: RequestInit) => fetch(`${service.url}${p}`, init) } as TestService;
}, 180_000);

afterAll(async () => {
  for (const child of children) await killed(child);
  await service?.stop();
  chain?.close();
  await devnet?.stop();
  await db?.drop();
  if (temporal) await killed(temporal, 'SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a whole trade with the Temporal orchestrator (temporal server start-dev, separate worker and prover processes)', () => {
  it('settles on both chains though a prover dies mid-proof and the worker is killed and restarted', async () => {
    let worker = await startProcess('worker');
    const provers = await Promise.all([startProcess('prover'), startProcess('prover')]);

    const makerToken = (await loginEvm(api, maker)).body.tokens.access;
    const bridgerToken = (await loginEvm(api, bridger)).body.tokens.access;
    const routes = await call(api, 'GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=TUSD`);
    const routeId = routes.body.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;

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
    const hook = await call(api, 'POST', '/v1/webhooks', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` }, makerToken);
    expect(hook.status).toBe(201);

    const ad = await call(api, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '1000' }, makerToken);
    await chain.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', 1000n);
    const adTx = await chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', ad.body);
    expect((await call(api, 'POST', `/v1/ads/${ad.body.adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);
    const adId: string = ad.body.adId;

    // Create (the Bridger approved the deposit first: the service checks the allowance): the workflow `trade-<id>` starts, indexed by AdId and RouteId.
    await chain.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
    const created = await call(api, 'POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
    expect(created.status).toBe(200);
    const { tradeId, reqContractDetails: order } = created.body;
    const workflowId = tradeWorkflowId(tradeId);
    expect(await eventually('indexed', () => listWorkflows(`AdId='${adId}' AND RouteId='${routeId}' AND TradeStatus='PENDING'`), (ids) => ids.length > 0, 15_000)).toEqual([workflowId]);

    // A transaction that is not this order's: 422, nothing changes.
    const wrong = await call(api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: adTx }, bridgerToken);
    expect(wrong.status).toBe(422);
    expect((await call(api, 'GET', `/v1/trades/${tradeId}`, undefined, bridgerToken)).body.status).toBe('PENDING');

    // Deposit and confirm: the API verifies and applies it, the workflow is signalled; the proof goes to queue `proofs`.
    const depositTx = await chain.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
    expect((await call(api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).body).toEqual({ tradeId, success: true, duplicate: false });
    expect((await call(api, 'GET', `/v1/trades/${tradeId}`, undefined, bridgerToken)).body.status).toBe('DEPOSITED');
    expect((await call(api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);

    // The prover that took the proof dies mid-proof (SIGKILL); the other finishes it once its heartbeat times out.
    const busy = await eventually('a busy prover', async () => {
      for (const p of provers) if (/relayer_prover_busy_workers 1/.test(await metricsOf(p))) return p;
      return undefined;
    }, (p) => p !== undefined, 60_000);
    await killed(busy!.child);
    const survivor = provers.find((p) => p !== busy)!;
    const proved = await eventually('proof-ready', () => db.knex('trades').where({ id: tradeId }).first('status', 'proof_state', 'proof'), (r) => r.proof_state === 'ready', 90_000);
    expect(proved.status).toBe('DEPOSITED');
    expect(proved.proof.publicSignals).toHaveLength(4);
    const survivorMetrics = await metricsOf(survivor);
    expect(survivorMetrics).toMatch(/relayer_prover_proofs_total\{[^}]*\} [1-9]|relayer_prover_\w+_count [1-9]/);
    // Temporal's own metrics are forwarded on the same /metrics.
    expect(survivorMetrics).toMatch(/^temporal_\w+/m);

    // The worker is killed and a new one takes over: the lock confirm is answered by the new worker.
    expect(await killed(worker.child)).toBe(null);
    worker = await startProcess('worker');
    const lock = await call(api, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
    expect(lock.status).toBe(200);
    const lockTx = await chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
    expect((await call(api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken)).status).toBe(200);
    expect((await call(api, 'GET', `/v1/trades/${tradeId}`, undefined, makerToken)).body.status).toBe('LOCKED');
    // The API answered LOCKED from the database; the workflow learns it from the follow-ups signal, and
    // its first task after the worker's death waits out the dead worker's sticky queue: the search
    // attribute follows within seconds, more on a loaded machine.
    expect(await eventually('indexed LOCKED', () => listWorkflows(`TradeStatus='LOCKED' AND AdId='${adId}'`), (ids) => ids.length > 0, 60_000)).toEqual([workflowId]);

    // Both unlocks with the proof; the contracts pay out.
    const makerUnlock = await call(api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(makerKey!.privateKey, order.orderHash) }, makerToken);
    expect(makerUnlock.status).toBe(200);
    const bridgerBefore = await chain.balanceOf(AD_CHAIN, bridger.address);
    const adUnlockTx = await chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'unlock', makerUnlock.body, makerUnlock.body);
    expect((await call(api, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlockTx }, makerToken)).status).toBe(200);
    expect(await chain.balanceOf(AD_CHAIN, bridger.address)).toBe(bridgerBefore + 100n);

    const bridgerUnlock = await call(api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, order.orderHash) }, bridgerToken);
    expect(bridgerUnlock.status).toBe(200);
    const makerBefore = await chain.balanceOf(ORDER_CHAIN, maker.address);
    const orderUnlockTx = await chain.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'unlock', bridgerUnlock.body, bridgerUnlock.body);
    expect((await call(api, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, bridgerToken)).status).toBe(200);
    expect(await chain.balanceOf(ORDER_CHAIN, maker.address)).toBe(makerBefore + 100n);
    expect((await call(api, 'GET', `/v1/trades/${tradeId}`, undefined, bridgerToken)).body).toMatchObject({ status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true });
    expect((await call(api, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ poolAmount: '1000', availableAmount: '900', lockedAmount: '0' });
    // A repeated confirm is a duplicate, answered 200; the deposit counted once.
    expect((await call(api, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, makerToken)).status).toBe(200);
    expect(Number((await db.knex('chain_events').where({ subject_id: tradeId, event: 'OrderCreated' }).count({ n: '*' }))[0]!.n)).toBe(1);
    expect(await eventually('indexed SETTLED', () => listWorkflows(`TradeStatus='SETTLED' AND RouteId='${routeId}'`), (ids) => ids.length > 0, 15_000)).toEqual([workflowId]);

    // The history shows it: generateProof's first attempt timed out on its heartbeat, the second completed.
    const history = await (service.container.orchestrator() as TemporalOrchestrator).client.workflow.getHandle(workflowId).fetchHistory();
    const retried = history.events!.filter((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 0) > 1);
    expect(retried).toHaveLength(1);
    expect(retried[0]!.activityTaskStartedEventAttributes!.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(4); // TIMEOUT_TYPE_HEARTBEAT
    if (process.env.RECORD_HISTORIES === '1') {
      mkdirSync(path.join(root, 'workflows/temporal/histories/v2'), { recursive: true });
      writeFileSync(path.join(root, 'workflows/temporal/histories/v2/devnet-settled-prover-killed.json'), `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 1)}\n`);
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
    await new Promise<void>((resolve) => { receiver.closeAllConnections(); receiver.close(() => resolve()); });

    // SIGTERM stops a worker and a prover gracefully (exit 0).
    expect(await killed(worker.child, 'SIGTERM')).toBe(0);
    expect(await killed(survivor.child, 'SIGTERM')).toBe(0);
  }, 300_000);

  /**
   * A TUSD ad funded with `fund` on the ad chain, a trade of `amount` deposited on the order chain and
   * locked by the Maker, each step confirmed through the API as a dApp would.
   */
  async function lockedTrade(fund: bigint, amount: bigint) {
    const makerToken: string = (await loginEvm(api, maker)).body.tokens.access;
    const bridgerToken: string = (await loginEvm(api, bridger)).body.tokens.access;
    const routes = await call(api, 'GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=TUSD`);
    const routeId = routes.body.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;
    const ad = await call(api, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: fund.toString() }, makerToken);
    await chain.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', fund);
    const adTx = await chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', ad.body);
    expect((await call(api, 'POST', `/v1/ads/${ad.body.adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);
    const adId: string = ad.body.adId;
    await chain.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', amount);
    const created = await call(api, 'POST', '/v1/trades/create', { adId, routeId, amount: amount.toString(), bridgerDstAddress: bridger.address }, bridgerToken);
    const { tradeId, reqContractDetails: order } = created.body;
    const depositTx = await chain.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
    expect((await call(api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);
    const lock = await call(api, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
    const lockTx = await chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
    expect((await call(api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken)).status).toBe(200);
    return { tradeId: tradeId as string, order, lockParams: lock.body.orderParams, adId, makerToken, bridgerToken };
  }

  it('settles a trade whose Maker locks and never unlocks: the Bridger takes the ad-side unlock (side "ad"), confirms it through the workflow, then the order side; zero drift', async () => {
    const worker = await startProcess('worker');
    const prover = await startProcess('prover');
    const { tradeId, order, adId, bridgerToken } = await lockedTrade(300n, 60n);
    // The Maker is gone from here on.

    const signature = signOrderHash(bridgerKey!.privateKey, order.orderHash);
    const adSide = await eventually('the proof', () => call(api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature, side: 'ad' }, bridgerToken), (r) => r.status !== 409, 120_000);
    expect(adSide.status).toBe(200);
    expect(adSide.body).toMatchObject({ chainId: AD_CHAIN, contractAddress: devnet.deployments[AD_CHAIN]!.adManager });
    expect((await call(api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature }, bridgerToken)).status).toBe(409);
    const bridgerBefore = await chain.balanceOf(AD_CHAIN, bridger.address);
    const adUnlockTx = await chain.send(AD_CHAIN, 'adManager', bridgerKey!.privateKey, 'unlock', adSide.body, adSide.body);
    expect((await call(api, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlockTx }, bridgerToken)).body).toEqual({ tradeId, success: true, duplicate: false });
    expect(await chain.balanceOf(AD_CHAIN, bridger.address)).toBe(bridgerBefore + 60n);

    const orderSide = await call(api, 'POST', `/v1/trades/${tradeId}/unlock`, { signature }, bridgerToken);
    expect(orderSide.status).toBe(200);
    const makerBefore = await chain.balanceOf(ORDER_CHAIN, maker.address);
    const orderUnlockTx = await chain.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'unlock', orderSide.body, orderSide.body);
    expect((await call(api, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, bridgerToken)).status).toBe(200);
    expect(await chain.balanceOf(ORDER_CHAIN, maker.address)).toBe(makerBefore + 60n);
    expect((await call(api, 'GET', `/v1/trades/${tradeId}`)).body).toMatchObject({ status: 'SETTLED', bridgerClaimed: true, adCreatorClaimed: true, unlockableBy: [] });
    expect((await call(api, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ poolAmount: '300', availableAmount: '240', lockedAmount: '0' });
    expect(await eventually('indexed SETTLED', () => listWorkflows(`TradeStatus='SETTLED' AND AdId='${adId}'`), (ids) => ids.length > 0, 15_000)).toEqual([tradeWorkflowId(tradeId)]);
    expect(await service.container.runAudit()).toMatchObject({ drifts: [], repairs: [] });

    await killed(worker.child, 'SIGTERM');
    await killed(prover.child, 'SIGTERM');
  }, 300_000);

  // Last: anvil's ad chain clock ends hours ahead of the service's.
  it("ends a LOCKED trade EXPIRED when the Maker reports its lock released after lockExpiry: the workflow closes its state, the amount is back in the ad", async () => {
    const worker = await startProcess('worker');
    const prover = await startProcess('prover');
    const { tradeId, lockParams, adId, makerToken, bridgerToken } = await lockedTrade(500n, 100n);
    expect((await call(api, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ availableAmount: '400', lockedAmount: '100' });

    // No ad-side unlock before lockExpiry: the Maker takes the lock back on chain and reports it through /confirm.
    const adChain = chain.provider(AD_CHAIN);
    const now = (await adChain.getBlock('latest'))!.timestamp;
    await adChain.send('evm_increaseTime', [Number(lockParams.lockExpiry) - now + 1]);
    await adChain.send('evm_mine', []);
    const { functionName, args } = evmTimeoutCall('releaseLock', lockParams);
    const releaseTx = await mined(chain.contract(AD_CHAIN, 'adManager', makerKey!.privateKey).getFunction(functionName)(...args));
    expect((await call(api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: releaseTx }, makerToken)).body).toEqual({ tradeId, success: true, duplicate: false });
    expect((await call(api, 'GET', `/v1/trades/${tradeId}`)).body).toMatchObject({ status: 'EXPIRED', bridgerClaimed: false });
    expect((await call(api, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ availableAmount: '500', lockedAmount: '0' });
    expect((await call(api, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: releaseTx }, makerToken)).body).toEqual({ tradeId, success: true, duplicate: true });
    expect(await eventually('indexed EXPIRED', () => listWorkflows(`TradeStatus='EXPIRED' AND AdId='${adId}'`), (ids) => ids.length > 0, 15_000)).toEqual([tradeWorkflowId(tradeId)]);
    expect(await service.container.runAudit()).toMatchObject({ drifts: [], repairs: [] });

    await killed(worker.child, 'SIGTERM');
    await killed(prover.child, 'SIGTERM');
  }, 300_000);
});
