import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../config/config.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';
import { startDevnet, type Devnet } from '../devnet/index.ts';
import { importRegistry } from '../registry/import.ts';
import { start, type RunningService } from '../entrypoints/service.ts';
import type { TestService } from './support/service.ts';
import { call } from './support/wallets.ts';
import {
  ORDER_STATE, prepareStellarTrades, sorobanOrder, stellarAdEvmDeposit, submitStellar, type StellarTradeWorld,
} from './support/stellar-trades.ts';
import { startServiceProcess, startTemporalDevServer, stopped } from './support/temporal-stack.ts';
import { eventually } from './support/devnet-client.ts';

/**
 * The lock window's end with the Temporal orchestrator (a real `temporal server start-dev`, the
 * API in this process, `npm run worker` and `npm run prover` as OS processes) and a Stellar ad
 * chain (the local Soroban network): the Maker's lock on the Soroban AdManager, reported by nobody,
 * is found when the window's workflow timer fires, so the trade becomes LOCKED, not EXPIRED, and the
 * books' locked equal the Soroban AdManager's. Short timing as test/lock-window.test.ts: the lock
 * deadline 60 s after creation (ORDER_LOCK_EXPIRY_SECONDS 3660, TRADE_RESERVATION_TTL_SECONDS 20).
 */

const relayerKey = Wallet.createRandom().privateKey;
const relayerStellar = Keypair.random();
const domain = { name: 'ProofBridge', version: '1' };

let temporal: ChildProcess | undefined;
let db: TestDatabase;
let devnet: Devnet;
let dataDir: string;
let service: RunningService;
let world: StellarTradeWorld;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'relayer-lock-window-'));
  const [database, chains, server] = await Promise.all([
    createTestDatabase(),
    startDevnet({ ports: [0, 0], relayerEvmAddress: new Wallet(relayerKey).address, domain, stellar: { relayer: relayerStellar.publicKey(), port: 0 } }),
    startTemporalDevServer(inject('temporalCli')),
  ]);
  [db, devnet, temporal] = [database, chains, server.process];
  await importRegistry(db.knex, devnet.registry);
  const env = {
    NODE_ENV: 'test', DATABASE_URL: db.url, DATA_DIR: dataDir, TEMPORAL_ADDRESS: server.address,
    RELAYER_EVM_PRIVATE_KEY: relayerKey, RELAYER_STELLAR_SECRET: relayerStellar.secret(),
    TRADE_RESERVATION_TTL_SECONDS: '20', ORDER_LOCK_EXPIRY_SECONDS: '3660',
  };
  service = await start(loadConfig({ ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000' }), pino({ level: 'silent' }));
  const [worker, prover] = await Promise.all([startServiceProcess('worker', env), startServiceProcess('prover', { ...env, PROVER_POOL_SIZE: '1' })]);
  children.push(worker.child, prover.child);
  const api = { url: service.url, request: (p: string, init?: RequestInit) => fetch(`${service.url}${p}`, init) } as TestService;
  world = await prepareStellarTrades({ api, knex: db.knex, evm: devnet, stellar: devnet.stellar! });
}, 5 * 60_000);

afterAll(async () => {
  for (const child of children) await stopped(child);
  world?.chain.close();
  await service?.stop();
  await devnet?.stop();
  await db?.drop();
  if (temporal) await stopped(temporal, 'SIGTERM');
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('the lock window on a Stellar ad chain (Temporal orchestrator)', () => {
  it('takes the Maker\'s lock nobody reported when the window\'s timer fires: LOCKED, not EXPIRED, the books\' locked equal the Soroban AdManager\'s', async () => {
    const run = await stellarAdEvmDeposit(world, 10_000_000n);
    const lock = await call(world.api, 'POST', `/v1/trades/${run.tradeId}/lock`, undefined, run.makerToken);
    expect(lock.status).toBe(200);
    await submitStellar(world, world.makerStellar, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
    expect(await sorobanOrder(world, world.stellar.deployment.adManager, run.orderHash)).toEqual({ state: ORDER_STATE.locked });

    const status = async () => (await call(world.api, 'GET', `/v1/trades/${run.tradeId}`)).body.status;
    await eventually('the lock window', status, (s) => s !== 'DEPOSITED', 150_000);
    expect(await status()).toBe('LOCKED');
    expect((await call(world.api, 'GET', `/v1/ads/${run.adId}`)).body).toMatchObject({ availableAmount: '40000000', lockedAmount: '10000000' });
    expect(await service.container.runAudit()).toMatchObject({ drifts: [], repairs: [], unchecked: 0 });
  }, 300_000);
});
