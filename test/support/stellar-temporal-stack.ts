import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { pino } from 'pino';
import { loadConfig } from '../../config/config.ts';
import { startDevnet, type Devnet } from '../../devnet/index.ts';
import { start, type RunningService } from '../../entrypoints/service.ts';
import { importRegistry } from '../../registry/import.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import type { TestService } from './service.ts';
import { prepareStellarTrades, type StellarTradeWorld } from './stellar-trades.ts';
import { startServiceProcess, startTemporalDevServer, stopped } from './temporal-stack.ts';

/** The service on Temporal over the devnet with the local Soroban network, and the trade world on it. */
export interface StellarTemporalStack {
  /** The API, in the test's own process (TEMPORAL_ADDRESS set). */
  service: RunningService;
  world: StellarTradeWorld;
  /** The Temporal dev server's address (host:port). */
  temporalAddress: string;
  /** Stops everything it started, in reverse, and removes the data directory. */
  stop(): Promise<void>;
}

/**
 * A real `temporal server start-dev`, the API in this process, one `npm run worker` and one
 * `npm run prover` (a single pool thread) as OS processes over one fresh database, the devnet with
 * the local Soroban network (chain 148) beside the two anvil chains; `env` adds settings for all
 * three processes.
 */
export async function startStellarTemporalStack(cli: string, env: Record<string, string> = {}): Promise<StellarTemporalStack> {
  const relayerKey = Wallet.createRandom().privateKey;
  const relayerStellar = Keypair.random();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'relayer-stellar-temporal-'));
  const children: ChildProcess[] = [];
  let db: TestDatabase | undefined;
  let devnet: Devnet | undefined;
  let temporal: ChildProcess | undefined;
  let service: RunningService | undefined;
  let world: StellarTradeWorld | undefined;
  const stop = async () => {
    for (const child of children) await stopped(child);
    world?.chain.close();
    await service?.stop();
    await devnet?.stop();
    await db?.drop();
    if (temporal) await stopped(temporal, 'SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const [database, chains, server] = await Promise.all([
      createTestDatabase(),
      startDevnet({
        ports: [0, 0], relayerEvmAddress: new Wallet(relayerKey).address, domain: { name: 'ProofBridge', version: '1' },
        stellar: { relayer: relayerStellar.publicKey(), port: 0 },
      }),
      startTemporalDevServer(cli),
    ]);
    [db, devnet, temporal] = [database, chains, server.process];
    await importRegistry(database.knex, chains.registry);
    const processEnv = {
      NODE_ENV: 'test', DATABASE_URL: database.url, DATA_DIR: dataDir, TEMPORAL_ADDRESS: server.address,
      RELAYER_EVM_PRIVATE_KEY: relayerKey, RELAYER_STELLAR_SECRET: relayerStellar.secret(), ...env,
    };
    const running = await start(
      loadConfig({ ...processEnv, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000' }),
      pino({ level: 'silent' }),
    );
    service = running;
    const [worker, prover] = await Promise.all([
      startServiceProcess('worker', processEnv), startServiceProcess('prover', { ...processEnv, PROVER_POOL_SIZE: '1' }),
    ]);
    children.push(worker.child, prover.child);
    const api = { url: running.url, request: (p: string, init?: RequestInit) => fetch(`${running.url}${p}`, init) } as TestService;
    const prepared = await prepareStellarTrades({ api, knex: database.knex, evm: chains, stellar: chains.stellar! });
    world = prepared;
    return { service: running, world: prepared, temporalAddress: server.address, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
