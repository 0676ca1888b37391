import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { Wallet } from 'ethers';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import { start, type RunningService } from '../../entrypoints/service.ts';
import { tradeWorkflowId } from '../../workflows/temporal/workflows.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { eventually } from '../support/devnet-client.ts';
import { insertAd, insertRouteWithChains, type RouteFixture } from '../support/fixtures.ts';
import type { TestService } from '../support/service.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { startServiceProcess, startTemporalDevServer, stopped, type ServiceProcess } from '../support/temporal-stack.ts';
import { call, loginEvm, newEvmAccount } from '../support/wallets.ts';

/**
 * The durable start of trades on Temporal (issue 24): the reservation and the intent to start its
 * workflow commit together (the start outbox), so creates made while the Temporal frontend is
 * unreachable still reserve and answer, and once it is back every trade's workflow runs and every
 * reservation expires on time. The API and the worker reach a real `temporal server start-dev`
 * through TCP relays this test cuts (test/support/tcp-proxy.ts).
 */

const RESERVATION_TTL_SECONDS = 20;
const relayerKey = Wallet.createRandom().privateKey;
const relayerStellar = Keypair.random().secret();
const maker = newEvmAccount();
const bridger = newEvmAccount();

let temporal: ChildProcess;
let temporalAddress: string;
let apiLink: TcpProxy;
let workerLink: TcpProxy;
let direct: Connection;
let temporalClient: Client;
let db: TestDatabase;
let dataDir: string;
let service: RunningService;
let api: TestService;
let worker: ServiceProcess | undefined;
let route: RouteFixture;
let adId: string;
let bridgerToken: string;

async function createTrade(amount: string) {
  const created = await call(api, 'POST', '/v1/trades/create', { adId, routeId: route.routeId, amount, bridgerDstAddress: bridger.address }, bridgerToken);
  expect(created.status).toBe(200);
  return created.body.tradeId as string;
}

async function workflowStatus(tradeId: string): Promise<string | 'missing'> {
  try {
    return (await temporalClient.workflow.getHandle(tradeWorkflowId(tradeId)).describe()).status.name;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'missing';
    throw error;
  }
}

const pendingStarts = async () => (await db.knex('trade_starts').pluck('trade_id')) as string[];
const metricOf = (text: string, line: RegExp) => Number(line.exec(text)?.[1] ?? 0);

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'relayer-durable-start-'));
  let server;
  [db, server] = await Promise.all([createTestDatabase(), startTemporalDevServer(inject('temporalCli'))]);
  temporal = server.process;
  temporalAddress = server.address;
  const [host, port] = temporalAddress.split(':') as [string, string];
  apiLink = await startTcpProxy({ host, port: Number(port) });
  workerLink = await startTcpProxy({ host, port: Number(port) });
  direct = await Connection.connect({ address: temporalAddress });
  temporalClient = new Client({ connection: direct });

  route = await insertRouteWithChains(db.knex);
  adId = await insertAd(db.knex, route, { creator_address: maker.address, creator_dst_address: maker.address, pool_amount: '1000' });

  const config = loadConfig({
    NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: db.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000', RELAYER_EVM_PRIVATE_KEY: relayerKey, RELAYER_STELLAR_SECRET: relayerStellar,
    METRICS_ON_API_PORT: 'true', TEMPORAL_ADDRESS: apiLink.address, TRADE_RESERVATION_TTL_SECONDS: String(RESERVATION_TTL_SECONDS), TRADE_START_RECONCILE_SECONDS: '1',
    MAX_OPEN_RESERVATIONS_PER_WALLET: '10', // one Bridger holds the five reservations of this test at once
  });
  service = await start(config, pino({ level: 'silent' }));
  api = { request: (p: string, init?: RequestInit) => fetch(`${service.url}${p}`, init) } as TestService;
  bridgerToken = (await loginEvm(api, bridger)).body.tokens.access;
}, 120_000);

afterAll(async () => {
  if (worker) await stopped(worker.child);
  await service?.stop();
  await direct?.close();
  await apiLink?.close();
  await workerLink?.close();
  await db?.drop();
  if (temporal) await stopped(temporal, 'SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
});

describe('durable trade start on Temporal (the start outbox and its reconciler)', () => {
  it('reserves and answers while Temporal is unreachable, starts every trade once it is back, and expires every reservation on time', async () => {
    // 1. Temporal cut off from the API, no worker yet: creates still reserve and answer 200.
    apiLink.cut();
    const early = await Promise.all([createTrade('100'), createTrade('150'), createTrade('50')]);
    expect((await call(api, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ poolAmount: '1000', availableAmount: '700' });
    expect((await pendingStarts()).sort()).toEqual([...early].sort());
    for (const tradeId of early) expect(await workflowStatus(tradeId)).toBe('missing');

    // A confirm meanwhile is "retry later" (503 with Retry-After), never a 500, and changes nothing.
    const confirm = await api.request(`/v1/trades/${early[0]}/confirm`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${bridgerToken}` },
      body: JSON.stringify({ txHash: `0x${'ab'.repeat(32)}` }),
    });
    expect(confirm.status).toBe(503);
    expect(confirm.headers.get('retry-after')).toBe('2');
    expect((await pendingStarts()).length).toBe(3);

    // 2. Temporal back; a worker starts: its reconciler starts every trade left behind.
    apiLink.restore();
    worker = await startServiceProcess('worker', {
      NODE_ENV: 'test', DATABASE_URL: db.url, DATA_DIR: dataDir, TEMPORAL_ADDRESS: workerLink.address,
      RELAYER_EVM_PRIVATE_KEY: relayerKey, RELAYER_STELLAR_SECRET: relayerStellar, TRADE_START_RECONCILE_SECONDS: '1', METRICS_SAMPLE_SECONDS: '1',
    });
    await eventually('outbox drained', pendingStarts, (ids) => ids.length === 0, 30_000);
    // Started: running, or already closed when its reservation ran out meanwhile (a workflow closes at its trade's end).
    for (const tradeId of early) expect(['RUNNING', 'COMPLETED']).toContain(await workflowStatus(tradeId));

    // 3. Both links cut while more trades are created; the running worker's schedule starts them once back.
    apiLink.cut();
    workerLink.cut();
    const late = await Promise.all([createTrade('200'), createTrade('25')]);
    expect((await pendingStarts()).sort()).toEqual([...late].sort());
    for (const tradeId of late) expect(await workflowStatus(tradeId)).toBe('missing');
    apiLink.restore();
    workerLink.restore();
    await eventually('outbox drained again', pendingStarts, (ids) => ids.length === 0, 60_000);
    for (const tradeId of late) expect(['RUNNING', 'COMPLETED']).toContain(await workflowStatus(tradeId));
    expect(worker.child.exitCode).toBe(null);

    // 4. Every reservation expires, none before its time; the ad has all its liquidity back.
    const all = [...early, ...late];
    const rows = await eventually('all expired', () => db.knex('trades').whereIn('id', all).select('status', 'reservation_expires_at', 'updated_at'),
      (r) => r.every((t) => t.status === 'EXPIRED'), (RESERVATION_TTL_SECONDS + 60) * 1000);
    for (const row of rows) expect(row.updated_at.getTime()).toBeGreaterThanOrEqual(row.reservation_expires_at.getTime());
    // Every trade over, every workflow closed with it (none lingers).
    for (const tradeId of all) expect(await eventually('workflow closed', () => workflowStatus(tradeId), (status) => status === 'COMPLETED', 30_000)).toBe('COMPLETED');
    expect((await call(api, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ poolAmount: '1000', availableAmount: '1000' });

    // What operators see: the failed request starts, the reconciler's starts, an empty outbox, nothing stuck.
    const apiMetrics = await (await api.request('/metrics')).text();
    expect(metricOf(apiMetrics, /relayer_trade_starts_total\{by="request",outcome="failed"\} (\d+)/)).toBe(5);
    // The gauges are a sample (every METRICS_SAMPLE_SECONDS, its reads one after another on the
    // worker's pool): wait for one taken after the last trade expired.
    const { metricsUrl } = worker;
    const workerMetrics = await eventually('the worker\'s gauges sampled after the last expiry', async () => (await fetch(metricsUrl)).text(),
      (text) => metricOf(text, /relayer_trade_start_outbox_pending (\d+)/) === 0 && /relayer_trades\{status="EXPIRED"\} 5/.test(text), 30_000);
    expect(metricOf(workerMetrics, /relayer_trade_starts_total\{by="reconciler",outcome="started"\} (\d+)/)).toBe(5);
    expect(metricOf(workerMetrics, /relayer_trade_start_outbox_pending (\d+)/)).toBe(0);
    expect(workerMetrics).toMatch(/relayer_trades_stuck\{status="PENDING"\} 0/);
  }, 240_000);
});
