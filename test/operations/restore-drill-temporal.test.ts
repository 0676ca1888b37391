import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Keypair } from '@stellar/stellar-sdk';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { Wallet } from 'ethers';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../db/embedded.ts';
import { createKnex, migrateToLatest } from '../../db/knex.ts';
import { freeLoopbackPort as freePort } from '../../entrypoints/free-port.ts';
import { start, type RunningService } from '../../entrypoints/service.ts';
import type { ReconciledTrade } from '../../workflows/temporal/reconcile.ts';
import { tradeWorkflowId } from '../../workflows/temporal/workflows.ts';
import { baseBackup, relayerDatabaseOf } from '../support/base-backup.ts';
import { eventually } from '../support/devnet-client.ts';
import { insertAd, insertRouteWithChains, type RouteFixture } from '../support/fixtures.ts';
import type { TestService } from '../support/service.ts';
import { startServiceProcess, startTemporalDevServer, stopped, type DevServer, type ServiceProcess } from '../support/temporal-stack.ts';
import { call, loginEvm, newEvmAccount } from '../support/wallets.ts';

/**
 * The backup and restore drill on Temporal (docs/operations.md "Backup and restore"): the database
 * is restored to a backup point while Temporal, which is not restored, has moved on. A trade open
 * at the backup point whose workflow closed after it (its reservation expired, the workflow ended)
 * is open again in the restored database with no workflow to arm its timer; a trade created after
 * the backup point is gone from the database while its workflow still runs. `npm run reconcile`
 * (its own OS process, as the restore procedure runs it) restarts the first from the database,
 * terminates the second, leaves a trade whose workflow is in line alone, and finds nothing to do the
 * second time; the restored trade then expires as a user sees it, and the ad has its liquidity back.
 * A fourth trade like the first, handed to the worker's start reconciler (the `trade_starts` row an
 * operator used to insert), is resumed by the start path itself instead of being dropped as started.
 *
 * The backup is the embedded drill's online base backup (test/support/base-backup.ts) of a cluster
 * of this file's own; the API runs in this process, the worker as `npm run worker`, on this file's
 * Temporal dev server. No prover: no trade here is deposited.
 */

const root = new URL('../..', import.meta.url).pathname;
const run = promisify(execFile);
const relayerKey = Wallet.createRandom().privateKey;
const relayerStellar = Keypair.random().secret();
const maker = newEvmAccount();
const bridger = newEvmAccount();
/** The reservation of the trade that expires between the backup and the restore; the others' outlive the drill. */
const SHORT_TTL_SECONDS = 30;
const LONG_TTL_SECONDS = 900;

let work: string;
let primary: EmbeddedDatabase | undefined;
let restored: EmbeddedDatabase | undefined;
let temporal: DevServer;
let connection: Connection;
let temporalClient: Client;
const apis: RunningService[] = [];
const workers: ServiceProcess[] = [];
let route: RouteFixture;
let adId: string;

const serviceEnv = (databaseUrl: string, ttlSeconds: number) => ({
  NODE_ENV: 'test', DATABASE_URL: databaseUrl, DATA_DIR: path.join(work, 'service-data'), TEMPORAL_ADDRESS: temporal.address,
  TRADE_RESERVATION_TTL_SECONDS: String(ttlSeconds), TRADE_START_RECONCILE_SECONDS: '1',
  RELAYER_EVM_PRIVATE_KEY: relayerKey, RELAYER_STELLAR_SECRET: relayerStellar,
});

/** The API in this process over `databaseUrl` (reservations of `ttlSeconds`), and a client of it. */
async function startApi(databaseUrl: string, ttlSeconds: number): Promise<TestService> {
  const config = loadConfig({
    ...serviceEnv(databaseUrl, ttlSeconds), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000',
    MAX_OPEN_RESERVATIONS_PER_WALLET: '10',
  });
  const service = await start(config, pino({ level: 'silent' }));
  apis.push(service);
  return { request: (p: string, init?: RequestInit) => fetch(`${service.url}${p}`, init) } as TestService;
}

async function startWorker(databaseUrl: string): Promise<ServiceProcess> {
  const worker = await startServiceProcess('worker', serviceEnv(databaseUrl, LONG_TTL_SECONDS), { only: true });
  workers.push(worker);
  return worker;
}

async function stopServices(): Promise<void> {
  for (const worker of workers.splice(0)) await stopped(worker.child);
  for (const api of apis.splice(0)) await api.stop();
}

async function workflowStatus(tradeId: string): Promise<string> {
  try {
    return (await temporalClient.workflow.getHandle(tradeWorkflowId(tradeId)).describe()).status.name;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'missing';
    throw error;
  }
}

/** `npm run reconcile` as its own OS process, with the worker's settings and nothing else: what it prints. */
async function reconcileOutput(databaseUrl: string, args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'entrypoints/reconcile-main.ts', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...serviceEnv(databaseUrl, LONG_TTL_SECONDS), LOG_LEVEL: 'warn' },
    timeout: 120_000,
  });
  return stdout;
}

/** `npm run reconcile -- --json`: its rows and summary. */
async function reconcile(databaseUrl: string): Promise<{ rows: ReconciledTrade[]; summary: { compared: number; acted: number; failed: number; ms: number } }> {
  const stdout = await reconcileOutput(databaseUrl, ['--json']);
  const line = stdout.split('\n').find((l) => l.startsWith('{"reconciled"'));
  if (!line) throw new Error(`reconcile printed no result:\n${stdout}`);
  const parsed = JSON.parse(line);
  return { rows: parsed.reconciled, summary: parsed.summary };
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'relayer-restore-drill-temporal-'));
  // PostgreSQL runs as `postgres` when the tests run as root: it must reach the clusters' folders.
  chmodSync(work, 0o755);
  let cluster: EmbeddedDatabase;
  [cluster, temporal] = await Promise.all([
    startEmbeddedDatabase({ dataDir: path.join(work, 'primary'), port: await freePort(), persistent: false }),
    startTemporalDevServer(inject('temporalCli')),
  ]);
  primary = cluster;
  const admin = createKnex(primary.url, 1);
  await admin.raw('CREATE DATABASE relayer');
  await admin.destroy();
  const knex = createKnex(relayerDatabaseOf(primary), 2);
  try {
    await migrateToLatest(knex);
    route = await insertRouteWithChains(knex);
    adId = await insertAd(knex, route, { creator_address: maker.address, creator_dst_address: maker.address, pool_amount: '1000' });
  } finally {
    await knex.destroy();
  }
  connection = await Connection.connect({ address: temporal.address });
  temporalClient = new Client({ connection });
}, 300_000);

afterAll(async () => {
  await stopServices();
  await connection?.close();
  if (temporal) await stopped(temporal.process, 'SIGTERM');
  await restored?.stop();
  await primary?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('backup and restore drill on Temporal', () => {
  it('after a restore, npm run reconcile restarts the open trade whose workflow closed, terminates the workflow of a trade the backup never held, and a second run does nothing', async () => {
    // Two APIs over the primary: one reserves briefly (the trade that expires after the backup), one for long.
    const shortApi = await startApi(relayerDatabaseOf(primary!), SHORT_TTL_SECONDS);
    const longApi = await startApi(relayerDatabaseOf(primary!), LONG_TTL_SECONDS);
    await startWorker(relayerDatabaseOf(primary!));
    const token = (await loginEvm(longApi, bridger)).body.tokens.access;
    const create = async (api: TestService, amount: string) => {
      const created = await call(api, 'POST', '/v1/trades/create', { adId, routeId: route.routeId, amount, bridgerDstAddress: bridger.address }, token);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      return created.body.tradeId as string;
    };
    const ids = { expiresAfterBackup: await create(shortApi, '100'), startedAgain: await create(shortApi, '25'), inLine: await create(longApi, '50'), afterBackup: '' };
    for (const id of [ids.expiresAfterBackup, ids.startedAgain, ids.inLine]) expect(await workflowStatus(id)).toBe('RUNNING');

    // The backup point: both trades PENDING with running workflows.
    await baseBackup(primary!, path.join(work, 'backup'));
    // After it: a trade the backup does not hold, and the first trade's reservation expires and its workflow closes.
    ids.afterBackup = await create(longApi, '200');
    for (const id of [ids.expiresAfterBackup, ids.startedAgain]) {
      await eventually('the short reservation expired on the primary', async () => (await call(shortApi, 'GET', `/v1/trades/${id}`)).body.status,
        (status) => status === 'EXPIRED', (SHORT_TTL_SECONDS + 60) * 1000);
      await eventually('its workflow closed', () => workflowStatus(id), (status) => status === 'COMPLETED', 60_000);
    }

    // The primary is lost with the services on it; Temporal goes on.
    await stopServices();
    await primary!.stop();
    primary = undefined;

    // The restore procedure: the backup into a fresh cluster, the schema checked, the services started, reconcile.
    const restoreStarted = Date.now();
    execFileSync('cp', ['-a', path.join(work, 'backup'), path.join(work, 'restored')]);
    restored = await startEmbeddedDatabase({ dataDir: path.join(work, 'restored'), port: await freePort(), persistent: false });
    const knex = createKnex(relayerDatabaseOf(restored), 2);
    try {
      await migrateToLatest(knex);
      const restoredAt = Date.now();
      expect(Object.fromEntries((await knex('trades').select('id', 'status')).map((r) => [r.id, r.status])))
        .toEqual({ [ids.expiresAfterBackup]: 'PENDING', [ids.startedAgain]: 'PENDING', [ids.inLine]: 'PENDING' });
      await startWorker(relayerDatabaseOf(restored));
      const api = await startApi(relayerDatabaseOf(restored), LONG_TTL_SECONDS);
      const servicesUpAt = Date.now();

      // The start path alone: a trade handed to the start reconciler (a `trade_starts` row) whose workflow
      // closed is resumed in a new run from the database, not dropped as "already started".
      await knex('trade_starts').insert({ trade_id: ids.startedAgain });
      await eventually('the trade handed to the start reconciler expired', async () => (await call(api, 'GET', `/v1/trades/${ids.startedAgain}`)).body.status,
        (status) => status === 'EXPIRED', 60_000);
      const reconcileStartedAt = Date.now();

      const first = await reconcile(relayerDatabaseOf(restored));
      const reconciledAt = Date.now();
      const byTrade = Object.fromEntries(first.rows.map((row) => [row.tradeId, row]));
      expect(byTrade[ids.expiresAfterBackup]).toMatchObject({ database: 'PENDING', workflow: 'COMPLETED', action: 'restart' });
      expect(byTrade[ids.afterBackup]).toMatchObject({ database: 'missing', workflow: 'RUNNING', action: 'terminate' });
      expect(byTrade[ids.inLine]).toMatchObject({ database: 'PENDING', workflow: 'RUNNING', workflowTradeStatus: 'PENDING', action: 'none' });
      expect(first.summary).toMatchObject({ acted: 2, failed: 0 });
      expect(first.rows.filter((row) => row.tradeId === ids.startedAgain).every((row) => row.action === 'none')).toBe(true);

      // What a user sees: the restored trade expires (its deadline long past, its new run's timer fires at once),
      // the trade the backup never held does not exist, the one in line is still reserved, and the ad has the rest back.
      await eventually('the restored trade expired', async () => (await call(api, 'GET', `/v1/trades/${ids.expiresAfterBackup}`)).body.status,
        (status) => status === 'EXPIRED', 60_000);
      const expiredAt = Date.now();
      expect((await call(api, 'GET', `/v1/trades/${ids.afterBackup}`)).status).toBe(404);
      expect(await workflowStatus(ids.afterBackup)).toBe('TERMINATED');
      expect((await call(api, 'GET', `/v1/trades/${ids.inLine}`)).body.status).toBe('PENDING');
      expect(await workflowStatus(ids.inLine)).toBe('RUNNING');
      expect((await call(api, 'GET', `/v1/ads/${adId}`)).body).toMatchObject({ poolAmount: '1000', availableAmount: '950' });

      // Run again, as an operator reads it (the table): nothing left to do.
      const second = await reconcileOutput(relayerDatabaseOf(restored), []);
      const table = second.split('\n').filter((l) => /^[0-9a-f]{8}-/.test(l));
      expect(table.find((l) => l.startsWith(ids.inLine))).toMatch(/PENDING\s+RUNNING\s+PENDING\s+none$/);
      expect(table.every((l) => / none$/.test(l)), second).toBe(true);
      expect(second).toMatch(/^\d+ compared, 0 acted on, 0 failed, \d+ ms$/m);
      console.log(JSON.stringify({
        restoreMs: restoredAt - restoreStarted, servicesUpMs: servicesUpAt - restoredAt, reconcileMs: reconciledAt - reconcileStartedAt,
        reconcileInsideMs: first.summary.ms, restoredTradeExpiredMs: expiredAt - reconciledAt, totalMs: expiredAt - restoreStarted,
      }));
    } finally {
      await knex.destroy();
    }
  }, 600_000);
});
