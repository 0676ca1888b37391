import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { Web3 } from 'web3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilAccounts } from '../../devnet/accounts.ts';
import { startDevnet, type Devnet } from '../../devnet/index.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../db/embedded.ts';
import { createKnex, migrateToLatest } from '../../db/knex.ts';
import { freeLoopbackPort as freePort } from '../../entrypoints/free-port.ts';
import { importRegistry } from '../../registry/import.ts';
import { baseBackup, relayerDatabaseOf } from '../support/base-backup.ts';
import { devnetClient, eventually, signOrderHash, type DevnetClient } from '../support/devnet-client.ts';
import { killed, readyUrl, requestService, type RunningService } from '../support/service-process.ts';
import { loginEvm } from '../support/wallets.ts';

/**
 * The backup and restore drill (docs/operations.md "Backup and restore"): a running service
 * with trades EXPIRED, PENDING, DEPOSITED and LOCKED is backed up online, the primary is lost, the backup is restored
 * into a fresh cluster, and the service started on it resumes every open trade and its books audit
 * finds no drift.
 *
 * The backup is PostgreSQL's online base backup (pg_backup_start, a copy of the data directory,
 * pg_backup_stop, its backup_label and the WAL written meanwhile), the base of point-in-time
 * recovery. pg_dump is not used here because no pg_dump of the server's major version exists on a
 * developer machine: the npm package ships initdb, pg_ctl and postgres only (18), and a distro's
 * pg_dump 15 refuses a newer server. The README gives the pg_dump procedure for production.
 */

const web3 = new Web3();
const [, makerKey, bridgerKey] = anvilAccounts(3);
const maker = web3.eth.accounts.privateKeyToAccount(makerKey!.privateKey);
const bridger = web3.eth.accounts.privateKeyToAccount(bridgerKey!.privateKey);
const relayerKey = Wallet.createRandom().privateKey;
const relayerStellar = Keypair.random().secret();
const root = new URL('../..', import.meta.url).pathname;
const RESERVATION_SECONDS = 25;

let work: string;
let primary: EmbeddedDatabase | undefined;
let restored: EmbeddedDatabase | undefined;
let devnet: Devnet;
let chain: DevnetClient;

type Running = RunningService;

/** `npm start`'s entry point as its own OS process over `databaseUrl`, with the books audit on; resolves once it listens. */
// The service's secrets (DATA_DIR) are configuration, not data: the restored service keeps the same ones, as a deployment's secret store would.
async function startService(databaseUrl: string, dataDir: string): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'entrypoints/main.ts'], {
    cwd: root,
    env: {
      ...process.env, NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: databaseUrl, DATA_DIR: dataDir, DEVNET: 'off',
      LOG_LEVEL: 'info', RELAYER_EVM_PRIVATE_KEY: relayerKey, RELAYER_STELLAR_SECRET: relayerStellar,
      RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000', PROVER_POOL_SIZE: '1', METRICS_ON_API_PORT: 'true',
      TRADE_RESERVATION_TTL_SECONDS: String(RESERVATION_SECONDS), BOOKS_AUDIT_CRON: '* * * * *', RETENTION_CRON: 'off', EMBEDDED_TIMER_RESUME_SECONDS: '5',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return { process: child, url: await readyUrl(child) };
}

const request = requestService;
const databaseOf = relayerDatabaseOf;

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'relayer-restore-drill-'));
  // PostgreSQL runs as `postgres` when the tests run as root: it must reach the clusters' folders.
  chmodSync(work, 0o755);
  primary = await startEmbeddedDatabase({ dataDir: path.join(work, 'primary'), port: await freePort(), persistent: false });
  const admin = createKnex(primary.url, 1);
  await admin.raw('CREATE DATABASE relayer');
  await admin.destroy();
  devnet = await startDevnet({ ports: [0, 0], relayerEvmAddress: new Wallet(relayerKey).address, domain: { name: 'ProofBridge', version: '1' } });
  const knex = createKnex(databaseOf(primary), 2);
  await migrateToLatest(knex);
  await importRegistry(knex, devnet.registry);
  await knex.destroy();
  chain = await devnetClient(devnet.rpcUrls, devnet.deployments);
}, 120_000);

afterAll(async () => {
  chain?.close();
  await devnet?.stop();
  await restored?.stop();
  await primary?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('backup and restore drill', () => {
  it('restores an online backup of a running service into a fresh cluster; the service there resumes every open trade (one to settlement) and its audit finds no drift', async () => {
    let service = await startService(databaseOf(primary!), path.join(work, 'service-data'));
    const ids: Record<'expired' | 'deposited' | 'locked' | 'pending', string> = { expired: '', deposited: '', locked: '', pending: '' };
    let lockedOrder: any;
    let makerToken = '';
    let bridgerToken = '';
    let adId = '';
    try {
      const asClient = { request: (p: string, init?: RequestInit) => fetch(`${service.url}${p}`, init) } as never;
      makerToken = (await loginEvm(asClient, maker)).body.tokens.access;
      bridgerToken = (await loginEvm(asClient, bridger)).body.tokens.access;
      const routes = await request(service, 'GET', '/v1/routes?adChainId=31338&orderChainId=31337&symbol=TUSD');
      const routeId = routes.body.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;
      const ad = await request(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '500' }, makerToken);
      adId = ad.body.adId;
      await chain.approve('31338', makerKey!.privateKey, 'adManager', 500n);
      const adTx = await chain.send('31338', 'adManager', makerKey!.privateKey, 'createAd', ad.body);
      expect((await request(service, 'POST', `/v1/ads/${adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);
      const create = async (amount: string) => {
        const created = await request(service, 'POST', '/v1/trades/create', { adId, routeId, amount, bridgerDstAddress: bridger.address }, bridgerToken);
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        return created.body;
      };

      await chain.approve('31337', bridgerKey!.privateKey, 'orderPortal', 1000n);
      // EXPIRED: a reservation nobody funded, past its deadline before the backup.
      ids.expired = (await create('10')).tradeId;
      // DEPOSITED: funded and confirmed; its proof runs on the primary and must resume after the restore.
      const deposited = await create('50');
      ids.deposited = deposited.tradeId;
      const depositTx = await chain.send('31337', 'orderPortal', bridgerKey!.privateKey, 'createOrder', deposited.reqContractDetails, { orderParams: deposited.reqContractDetails.orderParams });
      expect((await request(service, 'POST', `/v1/trades/${ids.deposited}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);
      // LOCKED: funded, and the Maker locked on the ad chain; after the restore it settles (both unlocks).
      lockedOrder = await create('40');
      ids.locked = lockedOrder.tradeId;
      const lockedDeposit = await chain.send('31337', 'orderPortal', bridgerKey!.privateKey, 'createOrder', lockedOrder.reqContractDetails, { orderParams: lockedOrder.reqContractDetails.orderParams });
      expect((await request(service, 'POST', `/v1/trades/${ids.locked}/confirm`, { txHash: lockedDeposit }, bridgerToken)).status).toBe(200);
      const lock = await request(service, 'POST', `/v1/trades/${ids.locked}/lock`, undefined, makerToken);
      expect(lock.status, JSON.stringify(lock.body)).toBe(200);
      const lockTx = await chain.send('31338', 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
      expect((await request(service, 'POST', `/v1/trades/${ids.locked}/confirm`, { txHash: lockTx }, makerToken)).status).toBe(200);
      await eventually('the first reservation expired', async () => (await request(service, 'GET', `/v1/trades/${ids.expired}`)).body.status, (s) => s === 'EXPIRED', 90_000);
      // PENDING: reserved just before the backup; its reservation must still expire on the restored service.
      ids.pending = (await create('20')).tradeId;

      const probe = createKnex(databaseOf(primary!), 1);
      const before = Object.fromEntries((await probe('trades').select('id', 'status')).map((r) => [r.id, r.status]));
      await probe.destroy();
      expect(before).toMatchObject({ [ids.expired]: 'EXPIRED', [ids.deposited]: 'DEPOSITED', [ids.locked]: 'LOCKED', [ids.pending]: 'PENDING' });

      // The backup, taken while the service runs; then the primary is lost with the service on it.
      const backupStarted = Date.now();
      await baseBackup(primary!, path.join(work, 'backup'));
      const backupMs = Date.now() - backupStarted;
      await killed(service.process);
      await primary!.stop();
      primary = undefined;

      // The restore: the backup copied to a fresh cluster's folder, PostgreSQL started on it (it
      // replays the WAL from the backup's checkpoint), the schema checked current.
      const restoreStarted = Date.now();
      execFileSync('cp', ['-a', path.join(work, 'backup'), path.join(work, 'restored')]);
      restored = await startEmbeddedDatabase({ dataDir: path.join(work, 'restored'), port: await freePort(), persistent: false });
      const knex = createKnex(databaseOf(restored), 2);
      await migrateToLatest(knex);
      const restoreMs = Date.now() - restoreStarted;
      console.log(JSON.stringify({ backupMs, restoreMs, databaseBytes: Number((await knex.raw(`SELECT pg_database_size('relayer') AS b`)).rows[0].b) }));
      try {
        expect(Object.fromEntries((await knex('trades').select('id', 'status')).map((r) => [r.id, r.status]))).toEqual(before);

        service = await startService(databaseOf(restored), path.join(work, 'service-data'));
        // Every open trade resumes: the deposited one gets its proof, the pending one expires at its deadline.
        await eventually('the deposited trade proof-ready', () => knex('trades').where({ id: ids.deposited }).first('status', 'proof_state'),
          (r) => r.proof_state === 'ready', 120_000);
        await eventually('the pending trade expired', () => knex('trades').where({ id: ids.pending }).first('status'), (r) => r.status === 'EXPIRED', 90_000);
        expect((await knex('trades').where({ id: ids.expired }).first('status')).status).toBe('EXPIRED');
        // The locked trade settles on the restored service: the Maker's unlock with the proof, then the Bridger's.
        const makerUnlock = await eventually('its proof', () => request(service, 'POST', `/v1/trades/${ids.locked}/unlock`, { signature: signOrderHash(makerKey!.privateKey, lockedOrder.reqContractDetails.orderHash) }, makerToken), (r) => r.status !== 409, 120_000);
        expect(makerUnlock.status, JSON.stringify(makerUnlock.body)).toBe(200);
        const adUnlockTx = await chain.send('31338', 'adManager', makerKey!.privateKey, 'unlock', makerUnlock.body, makerUnlock.body);
        expect((await request(service, 'POST', `/v1/trades/${ids.locked}/unlock/confirm`, { txHash: adUnlockTx }, makerToken)).status).toBe(200);
        const bridgerUnlock = await request(service, 'POST', `/v1/trades/${ids.locked}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, lockedOrder.reqContractDetails.orderHash) }, bridgerToken);
        expect(bridgerUnlock.status, JSON.stringify(bridgerUnlock.body)).toBe(200);
        const orderUnlockTx = await chain.send('31337', 'orderPortal', bridgerKey!.privateKey, 'unlock', bridgerUnlock.body, bridgerUnlock.body);
        expect((await request(service, 'POST', `/v1/trades/${ids.locked}/unlock/confirm`, { txHash: orderUnlockTx }, bridgerToken)).status).toBe(200);
        expect((await knex('trades').where({ id: ids.locked }).first('status')).status).toBe('SETTLED');
        // The books audit (at start and each minute) compares the restored books with the chains.
        const metrics = await eventually('an audit after the resumes', async () => (await fetch(`${service.url}/metrics`)).text(),
          (text) => Number(/relayer_audit_last_run_timestamp_seconds (\d+)/.exec(text)?.[1] ?? 0) * 1000 > Date.now() - 50_000, 120_000);
        const drift = [...metrics.matchAll(/relayer_audit_drift\{kind="([^"]+)"\} (\d+)/g)].map((m) => [m[1], Number(m[2])]);
        expect(drift.length).toBeGreaterThan(0);
        expect(drift.filter(([, n]) => n !== 0)).toEqual([]);
        expect(await knex('ads').where({ id: adId }).first('reserved_amount', 'locked_amount')).toEqual({ reserved_amount: '50', locked_amount: '0' });
      } finally {
        await knex.destroy();
      }
    } finally {
      await killed(service.process);
    }
  }, 600_000);
});
