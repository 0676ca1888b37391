/**
 * `npm run bench:trades`: whole trades on the devnet through the HTTP API, per orchestrator.
 *
 * For each orchestrator (ORCHESTRATORS, default `embedded,temporal`): starts the service on a fresh
 * embedded PostgreSQL with its own devnet (for Temporal also a dev server, one worker and one prover
 * process), a Maker funds one ad, then BENCH_TRADES trades (default 12) run BENCH_CONCURRENCY at a
 * time (default 2): create, deposit, confirm, wait for the proof, lock, both unlocks, confirms.
 * Prints deposit-confirm-to-proof-ready p50/p95 and trades settled per minute, beside the baseline
 * measured in the same run: bare proofs through the same pool size with no orchestration.
 */
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { Web3 } from 'web3';
// @ts-expect-error plain ESM script without types
import { installTemporal } from '../scripts/install-temporal.mjs';
import { pino } from 'pino';
import { loadConfig } from '../config/config.ts';
import { anvilAccounts } from '../devnet/accounts.ts';
import { ProverPool } from '../prover/pool.ts';
import { start, type RunningService } from '../entrypoints/service.ts';
import { sampleProofInput } from '../test/support/circuit-vectors.ts';
import { devnetClient, signOrderHash, type DevnetClient } from '../test/support/devnet-client.ts';
import { startServiceProcess, startTemporalDevServer, stopped } from '../test/support/temporal-stack.ts';

const TRADES = Number(process.env.BENCH_TRADES ?? 12);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 2);
const ORCHESTRATORS = (process.env.ORCHESTRATORS ?? 'embedded,temporal').split(',');
const AD_CHAIN = '31338';
const ORDER_CHAIN = '31337';

const web3 = new Web3();
const accounts = anvilAccounts(10);
const makerKey = accounts[1]!.privateKey;
const maker = web3.eth.accounts.privateKeyToAccount(makerKey);

interface Result { name: string; depositToProof: number[]; settledPerMinute: number; trades: number }

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};

async function api(service: RunningService, method: string, route: string, body?: unknown, token?: string) {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${service.url}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function login(service: RunningService, key: string): Promise<string> {
  const account = web3.eth.accounts.privateKeyToAccount(key);
  const challenge = await api(service, 'POST', '/v1/auth/challenge', { address: account.address, chainKind: 'EVM' });
  const login = await api(service, 'POST', '/v1/auth/login', { chainKind: 'EVM', message: challenge.message, signature: account.sign(challenge.message).signature });
  return login.tokens.access;
}

async function runOrchestrator(name: string): Promise<Result> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `bench-trades-${name}-`));
  chmodSync(dataDir, 0o755);
  if (name !== 'embedded' && name !== 'temporal') throw new Error(`unknown orchestrator ${name}: embedded or temporal`);
  // Temporal: a dev server, and the worker and one prover process beside the API, as deployed.
  const temporal = name === 'temporal' ? await startTemporalDevServer(installTemporal().cli) : undefined;
  const relayer = { RELAYER_EVM_PRIVATE_KEY: Wallet.createRandom().privateKey, RELAYER_STELLAR_SECRET: Keypair.random().secret() };
  const config = loadConfig({
    ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0',
    EMBEDDED_PG_PORT: String(40000 + Math.floor(Math.random() * 9000)), RATE_LIMIT_MAX: '1000000', AUTH_RATE_LIMIT_MAX: '1000000',
    ...relayer, ...(temporal ? { TEMPORAL_ADDRESS: temporal.address } : {}),
  });
  const service = await start(config, pino({ level: 'warn' }));
  const processes: ChildProcess[] = [];
  if (temporal) {
    const env = { DATABASE_URL: service.databaseUrl, DATA_DIR: dataDir, TEMPORAL_ADDRESS: temporal.address, LOG_LEVEL: 'warn', ...relayer };
    for (const kind of ['worker', 'prover'] as const) processes.push((await startServiceProcess(kind, { ...env, LOG_LEVEL: 'info' })).child);
  }
  const chain: DevnetClient = await devnetClient(service.devnet!.rpcUrls, service.devnet!.deployments);
  try {
    const makerToken = await login(service, makerKey);
    const routes = await api(service, 'GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=TUSD`);
    const routeId = routes.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;
    const total = BigInt(TRADES) * 100n;
    const ad = await api(service, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: total.toString() }, makerToken);
    await chain.approve(AD_CHAIN, makerKey, 'adManager', total);
    await api(service, 'POST', `/v1/ads/${ad.adId}/confirm`, { txHash: await chain.send(AD_CHAIN, 'adManager', makerKey, 'createAd', ad) }, makerToken);
    // The pool loads before the clock starts, as in a running service (on Temporal the prover process loaded its own).
    if (!temporal) await service.container.prover().ready();

    // One Bridger per lane, so lanes never share a nonce.
    const lanes = await Promise.all(Array.from({ length: CONCURRENCY }, async (_, lane) => {
      const key = accounts[2 + lane]!.privateKey;
      return { key, address: web3.eth.accounts.privateKeyToAccount(key).address, token: await login(service, key) };
    }));
    const depositToProof: number[] = [];
    let next = 0;
    const started = performance.now();
    // The Maker's transactions come from one wallet: serialise them so its nonce never races.
    let makerQueue: Promise<unknown> = Promise.resolve();
    const asMaker = <T>(work: () => Promise<T>): Promise<T> => {
      const run = makerQueue.then(work);
      makerQueue = run.catch(() => undefined);
      return run;
    };
    await Promise.all(lanes.map(async (bridger) => {
      while (next < TRADES) {
        next++;
        const created = await api(service, 'POST', '/v1/trades/create', { adId: ad.adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridger.token);
        const order = created.reqContractDetails;
        await chain.approve(ORDER_CHAIN, bridger.key, 'orderPortal', 100n);
        const depositTx = await chain.send(ORDER_CHAIN, 'orderPortal', bridger.key, 'createOrder', order, { orderParams: order.orderParams });
        const confirmedAt = performance.now();
        await api(service, 'POST', `/v1/trades/${created.tradeId}/confirm`, { txHash: depositTx }, bridger.token);
        for (;;) {
          const row = await service.knex('trades').where({ id: created.tradeId }).first('proof_state');
          if (row.proof_state === 'ready') break;
          // The proof-ready event is applied by the workflow; the row says so first on either orchestrator.
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        depositToProof.push((performance.now() - confirmedAt) / 1000);
        const lock = await api(service, 'POST', `/v1/trades/${created.tradeId}/lock`, undefined, makerToken);
        const lockTx = await asMaker(() => chain.send(AD_CHAIN, 'adManager', makerKey, 'lockForOrder', lock, { orderParams: lock.orderParams }));
        await api(service, 'POST', `/v1/trades/${created.tradeId}/confirm`, { txHash: lockTx }, makerToken);
        const makerUnlock = await api(service, 'POST', `/v1/trades/${created.tradeId}/unlock`, { signature: signOrderHash(makerKey, order.orderHash) }, makerToken);
        const adUnlockTx = await asMaker(() => chain.send(AD_CHAIN, 'adManager', makerKey, 'unlock', makerUnlock, makerUnlock));
        await api(service, 'POST', `/v1/trades/${created.tradeId}/unlock/confirm`, { txHash: adUnlockTx }, makerToken);
        const bridgerUnlock = await api(service, 'POST', `/v1/trades/${created.tradeId}/unlock`, { signature: signOrderHash(bridger.key, order.orderHash) }, bridger.token);
        const orderUnlockTx = await chain.send(ORDER_CHAIN, 'orderPortal', bridger.key, 'unlock', bridgerUnlock, bridgerUnlock);
        await api(service, 'POST', `/v1/trades/${created.tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, bridger.token);
      }
    }));
    const minutes = (performance.now() - started) / 60_000;
    const settled = Number((await service.knex('trades').where({ status: 'SETTLED' }).count({ n: '*' }))[0]!.n);
    return { name, depositToProof, settledPerMinute: settled / minutes, trades: settled };
  } finally {
    chain.close();
    for (const child of processes) await stopped(child, 'SIGTERM');
    await service.stop();
    if (temporal) await stopped(temporal.process, 'SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The floor: the same number of proofs through a pool of the same size, nothing else. */
async function baseline(): Promise<number[]> {
  const pool = new ProverPool({ size: Number(process.env.PROVER_POOL_SIZE ?? 0) || undefined });
  await pool.ready();
  const times: number[] = [];
  try {
    for (let i = 0; i < TRADES; i++) {
      const t = performance.now();
      await pool.prove(sampleProofInput().input);
      times.push((performance.now() - t) / 1000);
    }
  } finally {
    await pool.close();
  }
  return times;
}

const fmt = (s: number) => s.toFixed(2);
const results: Result[] = [];
for (const name of ORCHESTRATORS) results.push(await runOrchestrator(name));
const bare = await baseline();
console.log(`\n${TRADES} trades, ${CONCURRENCY} at a time, devnet, one machine\n`);
console.log('| run | trades settled | settled/min | deposit->proof p50 s | p95 s |');
console.log('|---|---|---|---|---|');
for (const r of results) console.log(`| ${r.name} | ${r.trades} | ${r.settledPerMinute.toFixed(1)} | ${fmt(percentile(r.depositToProof, 50))} | ${fmt(percentile(r.depositToProof, 95))} |`);
console.log(`| baseline: bare proofs, same pool, one at a time | - | - | ${fmt(percentile(bare, 50))} | ${fmt(percentile(bare, 95))} |`);
process.exit(0);
