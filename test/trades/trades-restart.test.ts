import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { Web3 } from 'web3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilAccounts } from '../../devnet/accounts.ts';
import { startDevnet, type Devnet } from '../../devnet/index.ts';
import { createKnex, migrateToLatest } from '../../db/knex.ts';
import { importRegistry } from '../../registry/import.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { devnetClient, eventually, type DevnetClient } from '../support/devnet-client.ts';
import { killed, readyUrl, requestService, type RunningService } from '../support/service-process.ts';
import { loginEvm } from '../support/wallets.ts';

/**
 * The embedded run killed (SIGKILL) while a proof is under way: after a restart over the same
 * database the trade reaches proof-ready once, with nothing lost or done twice.
 */

const web3 = new Web3();
const [, makerKey, bridgerKey] = anvilAccounts(3);
const maker = web3.eth.accounts.privateKeyToAccount(makerKey!.privateKey);
const bridger = web3.eth.accounts.privateKeyToAccount(bridgerKey!.privateKey);
const relayerKey = Wallet.createRandom().privateKey;
const root = new URL('../..', import.meta.url).pathname;

let db: TestDatabase;
let devnet: Devnet;
let chain: DevnetClient;
let dataDir: string;

type Running = RunningService;

/** `npm start`'s entry point as its own OS process over the test database; resolves once it listens. */
async function startService(): Promise<Running> {
  // One process (node with tsx's loader), not the tsx CLI, which runs the service in a child: a
  // SIGKILL must hit the process that proves.
  const child = spawn(process.execPath, ['--import', 'tsx', 'entrypoints/main.ts'], {
    cwd: root,
    env: {
      ...process.env, NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: db.url, DATA_DIR: dataDir, DEVNET: 'off',
      LOG_LEVEL: 'info', RELAYER_EVM_PRIVATE_KEY: relayerKey, RELAYER_STELLAR_SECRET: Keypair.random().secret(),
      RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000', PROVER_POOL_SIZE: '1', METRICS_ON_API_PORT: 'true',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return { process: child, url: await readyUrl(child) };
}

const request = requestService;


beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = mkdtempSync(path.join(tmpdir(), 'relayer-restart-'));
  devnet = await startDevnet({ ports: [0, 0], relayerEvmAddress: new Wallet(relayerKey).address, domain: { name: 'ProofBridge', version: '1' } });
  const knex = createKnex(db.url, 2);
  await migrateToLatest(knex);
  await importRegistry(knex, devnet.registry);
  await knex.destroy();
  chain = await devnetClient(devnet.rpcUrls, devnet.deployments);
});

afterAll(async () => {
  chain?.close();
  await devnet?.stop();
  await db?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the embedded run killed mid-proof', () => {
  it('resumes the proof after a restart and reaches proof-ready once', async () => {
    let service = await startService();
    try {
      const asClient = { request: (p: string, init?: RequestInit) => fetch(`${service.url}${p}`, init) } as never;
      const makerToken = (await loginEvm(asClient, maker)).body.tokens.access;
      const bridgerToken = (await loginEvm(asClient, bridger)).body.tokens.access;
      const routes = await request(service, 'GET', '/v1/routes?adChainId=31338&orderChainId=31337&symbol=TUSD');
      const routeId = routes.body.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;

      const ad = await request(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '500' }, makerToken);
      await chain.approve('31338', makerKey!.privateKey, 'adManager', 500n);
      const adTx = await chain.send('31338', 'adManager', makerKey!.privateKey, 'createAd', ad.body);
      expect((await request(service, 'POST', `/v1/ads/${ad.body.adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);

      await chain.approve('31337', bridgerKey!.privateKey, 'orderPortal', 50n);
      const created = await request(service, 'POST', '/v1/trades/create', { adId: ad.body.adId, routeId, amount: '50', bridgerDstAddress: bridger.address }, bridgerToken);
      const { tradeId, reqContractDetails: order } = created.body;
      const depositTx = await chain.send('31337', 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
      expect((await request(service, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);

      // Kill it the moment a worker thread is proving.
      await eventually('a busy prover', async () => (await fetch(`${service.url}/metrics`)).text(), (m) => /relayer_prover_busy_workers 1/.test(m), 30_000);
      await killed(service.process);
      const knex = createKnex(db.url, 1);
      try {
        expect(await knex('trades').where({ id: tradeId }).first('status', 'proof_state', 'proof')).toMatchObject({ status: 'DEPOSITED', proof_state: 'running', proof: null });
      } finally {
        await knex.destroy();
      }

      service = await startService();
      const knex2 = createKnex(db.url, 1);
      try {
        const row = await eventually('proof-ready', () => knex2('trades').where({ id: tradeId }).first('status', 'proof_state', 'proof'), (r) => r.proof_state === 'ready', 60_000);
        expect(row.status).toBe('DEPOSITED');
        expect(row.proof.publicSignals).toHaveLength(4);
        // Once: one deposit event recorded, the reservation counted once on the ad.
        expect(Number((await knex2('chain_events').where({ subject_id: tradeId }).count({ n: '*' }))[0]!.n)).toBe(1);
        expect(await knex2('ads').where({ id: ad.body.adId }).first('reserved_amount', 'locked_amount')).toEqual({ reserved_amount: '50', locked_amount: '0' });
      } finally {
        await knex2.destroy();
      }
    } finally {
      await killed(service.process);
    }
    // Two service starts, a proof, a kill and a resumed proof: its own waits (30 s + 60 s) exceed the
    // suite's default 60 s on a loaded machine, so the test is given room for them.
  }, 240_000);
});
