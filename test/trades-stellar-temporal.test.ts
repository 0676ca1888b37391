import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { pino } from 'pino';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../config/config.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';
import { startDevnet, type Devnet } from '../devnet/index.ts';
import { importRegistry } from '../registry/import.ts';
import { start, type RunningService } from '../entrypoints/service.ts';
import type { TestService } from './support/service.ts';
import { evmAdStellarOrderTrade, prepareStellarTrades, stellarAdEvmOrderTrade, type StellarTradeWorld } from './support/stellar-trades.ts';
import { startServiceProcess, startTemporalDevServer, stopped } from './support/temporal-stack.ts';
import { eventually } from './support/devnet-client.ts';
import { tradeWorkflowId } from '../workflows/temporal/workflows.ts';

/**
 * The whole trades with a Stellar side of test/trades-stellar.test.ts, with the Temporal
 * orchestrator: a real `temporal server start-dev`, the API in this process (TEMPORAL_ADDRESS set),
 * one `npm run worker` and one `npm run prover` as OS processes over the same database; the devnet
 * with the local Soroban network (chain 148) beside the two anvil chains.
 */

const relayerKey = Wallet.createRandom().privateKey;
const relayerStellar = Keypair.random();
const domain = { name: 'ProofBridge', version: '1' };

let temporal: ChildProcess | undefined;
let temporalAddress: string;
let db: TestDatabase;
let devnet: Devnet;
let dataDir: string;
let service: RunningService;
let world: StellarTradeWorld;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'relayer-stellar-temporal-'));
  const [database, chains, server] = await Promise.all([
    createTestDatabase(),
    startDevnet({ ports: [0, 0], relayerEvmAddress: new Wallet(relayerKey).address, domain, stellar: { relayer: relayerStellar.publicKey(), port: 0 } }),
    startTemporalDevServer(inject('temporalCli')),
  ]);
  [db, devnet, temporal, temporalAddress] = [database, chains, server.process, server.address];
  await importRegistry(db.knex, devnet.registry);
  const env = {
    NODE_ENV: 'test', DATABASE_URL: db.url, DATA_DIR: dataDir, TEMPORAL_ADDRESS: server.address,
    RELAYER_EVM_PRIVATE_KEY: relayerKey, RELAYER_STELLAR_SECRET: relayerStellar.secret(),
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

/** The trade's workflow as Temporal indexes it: it ran there, to the end. */
async function workflowStatus(tradeId: string): Promise<string | undefined> {
  const connection = await Connection.connect({ address: temporalAddress });
  try {
    const described = await new Client({ connection }).workflow.getHandle(tradeWorkflowId(tradeId)).describe();
    return described.searchAttributes.TradeStatus?.[0] as string | undefined;
  } finally {
    await connection.close();
  }
}

describe('a whole trade with a Stellar side (Temporal orchestrator, separate worker and prover processes)', () => {
  it('settles with an EVM ad chain and a Stellar order chain (XLM deposited on Soroban)', async () => {
    const { tradeId } = await evmAdStellarOrderTrade(world, 10_000_000n);
    expect(await eventually('indexed SETTLED', () => workflowStatus(tradeId), (status) => status === 'SETTLED', 15_000)).toBe('SETTLED');
  });

  it('settles with a Stellar ad chain and an EVM order chain (the unlock paying the Bridger on Soroban)', async () => {
    const { tradeId } = await stellarAdEvmOrderTrade(world, 10_000_000n);
    expect(await eventually('indexed SETTLED', () => workflowStatus(tradeId), (status) => status === 'SETTLED', 15_000)).toBe('SETTLED');
  });
});
