/**
 * `npm run bench:trades`: whole trades on the devnet through the HTTP API, per orchestrator.
 *
 * For each orchestrator (ORCHESTRATORS, default `embedded,temporal`): a fresh embedded PostgreSQL,
 * the two-chain devnet, and the service's own processes as deployed (`npm run api`; on Temporal
 * also a dev server, one `npm run worker` and BENCH_PROVERS `npm run prover`, default 1). A Maker
 * funds one ad; BENCH_CONCURRENCY lanes (default 2), each a fresh wallet funded on the order chain,
 * run BENCH_TRADES trades (default 12) between them: create, deposit, confirm, wait for the proof,
 * lock, both unlocks, confirms. Prints settled trades per minute, p50/p95 of every API call and of
 * deposit-confirmed to proof-ready, and CPU seconds per settled trade of each process (api, worker,
 * prover, PostgreSQL, Temporal, the anvil chains, this client; a pool's native provers count as their
 * parent's) and the part of it each burns idle, PostgreSQL's transactions (all, and the service's own without this
 * client's proof-ready reads) and rows written per trade, the
 * trade workflows' history events per trade on Temporal, and each run's own proof time (prover metrics),
 * beside the baseline measured in the same run: bare proofs through a pool of the same size with no orchestration. BENCH_EXACT_GAS=1
 * sends with the bare gas estimate (reproduces the createOrder out-of-gas, see devnet-client.ts).
 * BENCH_PROVIDERS=N (default 1): every chain read through N providers (the same anvil under N spellings of its
 * URL: 127.0.0.1, localhost, [::ffff:127.0.0.1]), all of which must agree on what the books act on (rpcQuorum N).
 * BENCH_KEEPER=1: the parties stop after the lock and the relayer's keeper sends both unlocks (no grace,
 * KEEPER_UNLOCK_AFTER_SECONDS=0): its CPU is in the api's (embedded) or the worker's (Temporal) figure,
 * and the keeper's transactions per trade are printed.
 */
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { Web3 } from 'web3';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import type { Knex } from 'knex';
// @ts-expect-error plain ESM script without types
import { installTemporal } from '../scripts/install-temporal.mjs';
import { startEmbeddedDatabase } from '../db/embedded.ts';
import { createKnex, migrateToLatest } from '../db/knex.ts';
import { listenForPushedEvents } from '../db/event-notifications.ts';
import { anvilAccounts, startDevnet } from '../devnet/index.ts';
import { ProverPool } from '../prover/pool.ts';
import { importRegistry } from '../registry/import.ts';
import { sampleProofInput } from '../test/support/circuit-vectors.ts';
import { devnetClient, signOrderHash, type DevnetClient } from '../test/support/devnet-client.ts';
import { startServiceProcess, startTemporalDevServer, stopped } from '../test/support/temporal-stack.ts';
import { cpuByRole, cpuSpent, type Roles } from './process-cpu.ts';

const TRADES = Number(process.env.BENCH_TRADES ?? 12);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 2);
const PROVERS = Number(process.env.BENCH_PROVERS ?? 1);
const ORCHESTRATORS = (process.env.ORCHESTRATORS ?? 'embedded,temporal').split(',');
const EXACT_GAS = process.env.BENCH_EXACT_GAS === '1';
const KEEPER = process.env.BENCH_KEEPER === '1';
const PROVIDERS = Number(process.env.BENCH_PROVIDERS ?? 1);
/** BENCH_LOG_STATEMENTS=<file prefix>: PostgreSQL logs every statement of the measured window to <prefix>-<orchestrator>.log (read with tools/statement-origins.ts). */
const LOG_STATEMENTS = process.env.BENCH_LOG_STATEMENTS;
/** Seconds the stack is left idle before the trades start, to measure what each process burns doing nothing. */
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 15);
const AD_CHAIN = '31338';
const ORDER_CHAIN = '31337';
const AMOUNT = 100n;

const web3 = new Web3();
const [funder, makerAccount] = anvilAccounts(2);
const makerKey = makerAccount!.privateKey;
const maker = web3.eth.accounts.privateKeyToAccount(makerKey);

/** Processes by role, matched on their command lines (first match wins); one none matches counts as its nearest matched ancestor (a pool's native provers). */
const ROLES: Roles = [
  ['api', /entrypoints\/api-main\.ts/],
  ['worker', /entrypoints\/worker-main\.ts/],
  ['prover', /entrypoints\/prover-main\.ts/],
  ['postgres', /postgres/],
  // The dev server by its own command: a checkout's path may say "temporal" too.
  ['temporal', /(^|\/)temporal server start-dev/],
  ['anvil', /anvil/],
];

/** The native prover's processes (prover/pool.ts spawns one per pool thread), for the bare proofs' CPU. */
const NATIVE_PROVER_ROLE: Roles = [['native', /relayer-groth16/]];

interface Result {
  name: string;
  trades: number;
  settledPerMinute: number;
  /** BENCH_KEEPER=1: the keeper's confirmed transactions. */
  keeperSends?: number;
  depositToProof: number[];
  calls: Map<string, number[]>;
  cpu: Record<string, number>;
  /** PostgreSQL's own counts over the run (pg_stat_database, pg_stat_user_tables): transactions and rows written, by table. */
  database: DatabaseCounts;
  /** On Temporal: history events of the trades' workflows by type (workflow tasks, signals, timers, activities), summed. */
  workflowEvents?: Record<string, number>;
  /** The trades' proofs' mean time in the pool during the run (witness + prove + verify, from the prover's metrics), seconds. */
  proofSeconds?: number;
  /** CPU seconds per second of each role while no trade ran (polls, schedules, metrics). */
  idleRate: Record<string, number>;
  /** The run's length, seconds. */
  seconds: number;
  failures: string[];
  /** The 1-, 5- and 15-minute load averages when the run ended (the machine is shared: read the figures beside them). */
  load: number[];
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};

/** An API client that records each call's duration under its route template. */
function apiClient(baseUrl: string, calls: Map<string, number[]>) {
  return async (method: string, route: string, body?: unknown, token?: string) => {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    const started = performance.now();
    const res = await fetch(`${baseUrl}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = await res.json();
    const template = `${method} ${route.split('?')[0]!.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, ':id')}`;
    calls.set(template, [...(calls.get(template) ?? []), performance.now() - started]);
    if (res.status !== 200) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
}

async function runOrchestrator(name: string): Promise<Result> {
  if (name !== 'embedded' && name !== 'temporal') throw new Error(`unknown orchestrator ${name}: embedded or temporal`);
  const dataDir = mkdtempSync(path.join(tmpdir(), `bench-trades-${name}-`));
  chmodSync(dataDir, 0o755);
  const stops: Array<() => Promise<unknown>> = [];
  const processes: ChildProcess[] = [];
  try {
    const relayerKey = Wallet.createRandom().privateKey;
    const relayer = { RELAYER_EVM_PRIVATE_KEY: relayerKey, RELAYER_STELLAR_SECRET: Keypair.random().secret() };
    const statementLog = LOG_STATEMENTS ? `${LOG_STATEMENTS}-${name}.log` : undefined;
    if (statementLog) writeFileSync(statementLog, '');
    const [database, devnet, temporal] = await Promise.all([
      startEmbeddedDatabase({
        dataDir: path.join(dataDir, 'pg'), port: 40000 + Math.floor(Math.random() * 9000), persistent: false,
        ...(statementLog ? { onLog: (text: string) => appendFileSync(statementLog, text) } : {}),
      }),
      startDevnet({ ports: [0, 0], relayerEvmAddress: new Wallet(relayerKey).address, domain: { name: 'ProofBridge', version: '1' } }),
      name === 'temporal' ? startTemporalDevServer(installTemporal().cli) : Promise.resolve(undefined),
    ]);
    stops.push(() => database.stop(), () => devnet.stop());
    if (temporal) stops.push(() => stopped(temporal.process, 'SIGTERM'));
    // Each process names itself to PostgreSQL (node-postgres reads PGAPPNAME), so a statement log tells them apart.
    process.env.PGAPPNAME = 'bench-client';
    const knex = createKnex(database.url, 2);
    // This client's own statements (none inside a transaction: each is one of pg_stat_database's), so the
    // service's own transactions can be told from the total.
    let clientStatements = 0;
    knex.on('query', () => { clientStatements += 1; });
    stops.unshift(() => knex.destroy());
    const logStatements = async (on: boolean) => {
      if (!statementLog) return;
      const admin = createKnex(database.adminUrl, 1);
      try {
        await admin.raw(on ? "ALTER SYSTEM SET log_statement = 'all'" : 'ALTER SYSTEM RESET log_statement');
        await admin.raw("ALTER SYSTEM SET log_line_prefix = '%m [%p] %v %a '");
        await admin.raw('SELECT pg_reload_conf()');
      } finally {
        await admin.destroy();
      }
    };
    await migrateToLatest(knex);
    await importRegistry(knex, withProviders(devnet.registry, PROVIDERS));

    const env = {
      NODE_ENV: 'test', DATABASE_URL: database.url, DATA_DIR: dataDir, PORT: '0', RATE_LIMIT_MAX: '1000000', AUTH_RATE_LIMIT_MAX: '1000000',
      // Every lane holds one reservation of the one ad at a time.
      MAX_OPEN_RESERVATIONS_PER_AD: String(Math.max(20, CONCURRENCY)),
      ...relayer, ...(temporal ? { TEMPORAL_ADDRESS: temporal.address } : {}),
      KEEPER_ENABLED: KEEPER ? 'true' : 'false', KEEPER_POLL_SECONDS: '1', KEEPER_UNLOCK_AFTER_SECONDS: '0',
    };
    const api = await startServiceProcess('api', { ...env, PGAPPNAME: 'api' });
    processes.push(api.child);
    // Where the proofs' own times are read (the prover pool's metrics): the API's metrics port embedded, the provers' on Temporal.
    const proverMetrics: string[] = [];
    const apiMetricsPort = /"port":(\d+),"msg":"metrics listening"/.exec(api.output())?.[1];
    if (!temporal && apiMetricsPort) proverMetrics.push(`http://127.0.0.1:${apiMetricsPort}/metrics`);
    if (temporal) {
      const started = await Promise.all([
        startServiceProcess('worker', { ...env, PGAPPNAME: 'worker' }),
        ...Array.from({ length: PROVERS }, () => startServiceProcess('prover', { ...env, PGAPPNAME: 'prover' })),
      ]);
      processes.push(...started.map((p) => p.child));
      proverMetrics.push(...started.slice(1).map((p) => p.metricsUrl));
    }
    const chain: DevnetClient = await devnetClient(devnet.rpcUrls, devnet.deployments, { exactGas: EXACT_GAS });
    stops.unshift(async () => chain.close());
    if (KEEPER) {
      // The keeper's account (generated into DATA_DIR by the process that sends) given gas on both chains, as `npm start` does.
      const { evmPrivateKey } = JSON.parse(readFileSync(path.join(dataDir, 'keeper-keys.json'), 'utf8')) as { evmPrivateKey: string };
      const keeper = new Wallet(evmPrivateKey).address;
      for (const id of [AD_CHAIN, ORDER_CHAIN]) await chain.provider(id).send('anvil_setBalance', [keeper, '0x56BC75E2D63100000']);
    }
    const calls = new Map<string, number[]>();
    const call = apiClient(api.url, calls);
    const login = async (key: string) => {
      const account = web3.eth.accounts.privateKeyToAccount(key);
      const challenge = await call('POST', '/v1/auth/challenge', { address: account.address, chainKind: 'EVM' });
      return (await call('POST', '/v1/auth/login', { chainKind: 'EVM', message: challenge.message, signature: account.sign(challenge.message).signature })).tokens.access as string;
    };

    const makerToken = await login(makerKey);
    const routes = await call('GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=TUSD`);
    const routeId = routes.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;
    const total = BigInt(TRADES) * AMOUNT;
    const ad = await call('POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: total.toString() }, makerToken);
    await chain.approve(AD_CHAIN, makerKey, 'adManager', total);
    await call('POST', `/v1/ads/${ad.adId}/confirm`, { txHash: await chain.send(AD_CHAIN, 'adManager', makerKey, 'createAd', ad) }, makerToken);

    // One fresh Bridger wallet per lane, funded with gas and tokens on the order chain, so lanes never share a nonce.
    const orderChain = chain.provider(ORDER_CHAIN);
    const token = chain.contract(ORDER_CHAIN, 'testErc20', funder!.privateKey);
    // The lanes take trades from one counter, so a fast lane may run more than its share (at 200
    // trades on 50 lanes one ran out of tokens after five and failed seven creates): each lane holds enough for all.
    const perLane = AMOUNT * BigInt(TRADES);
    const lanes = [];
    for (let lane = 0; lane < CONCURRENCY; lane++) {
      const wallet = Wallet.createRandom();
      await orderChain.send('anvil_setBalance', [wallet.address, '0x56BC75E2D63100000']); // 100 ETH
      await (await token.getFunction('mint')(wallet.address, perLane)).wait();
      lanes.push({ key: wallet.privateKey, address: wallet.address, token: '' });
    }
    await Promise.all(lanes.map(async (lane) => { lane.token = await login(lane.key); }));
    calls.clear();

    // What the stack costs with nothing to do: paid again for every second the trades take.
    const idleBefore = cpuByRole(process.pid, ROLES);
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const idleRate = Object.fromEntries(Object.entries(cpuSpent(idleBefore, cpuByRole(process.pid, ROLES))).map(([role, s]) => [role, s / Math.max(1, IDLE_SECONDS)]));

    // Proof-ready, for every waiting lane: the service announces each committed event of a trade
    // (NOTIFY, db/event-notifications.ts), its proof's among them; a trade waited for is read when
    // its notice comes, and all of them every 5 s in case one is missed. (A query every 25 ms
    // for all of them was 40 statements a second on the service's PostgreSQL, counted in its CPU;
    // one a second was still 2-4 of a small run's transactions per trade.)
    const waiting = new Map<string, () => void>();
    let polling = true;
    const readReady = async (ids: string[]) => {
      if (ids.length === 0) return;
      const ready: string[] = await knex('trades').whereIn('id', ids).where({ proof_state: 'ready' }).pluck('id');
      for (const id of ready) { waiting.get(id)?.(); waiting.delete(id); }
    };
    const listener = listenForPushedEvents(knex, {
      onNotice: ({ tradeId }) => { if (tradeId && waiting.has(tradeId)) void readReady([tradeId]); },
      onConnected: () => undefined,
    });
    stops.unshift(() => listener.close());
    const poller = (async () => {
      while (polling) {
        await readReady([...waiting.keys()]);
        await new Promise((resolve) => setTimeout(resolve, 5000));
      }
    })();
    const proofReady = (tradeId: string) => new Promise<void>((resolve) => waiting.set(tradeId, resolve));

    // The Maker's transactions come from one wallet: serialise them so its nonce never races.
    let makerQueue: Promise<unknown> = Promise.resolve();
    const asMaker = <T>(work: () => Promise<T>): Promise<T> => {
      const run = makerQueue.then(work);
      makerQueue = run.catch(() => undefined);
      return run;
    };
    const depositToProof: number[] = [];
    const failures: string[] = [];
    let next = 0;
    await logStatements(true);
    const dbBefore = await databaseCounts(knex);
    // The snapshot's second statement (rows written) ran after its transaction count: the client's first in the window.
    const clientBefore = clientStatements - 1;
    const cpuBefore = cpuByRole(process.pid, ROLES, 'client');
    const started = performance.now();
    await Promise.all(lanes.map(async (bridger) => {
      while (next < TRADES) {
        next++;
        try {
          await chain.approve(ORDER_CHAIN, bridger.key, 'orderPortal', AMOUNT);
          const created = await call('POST', '/v1/trades/create', { adId: ad.adId, routeId, amount: AMOUNT.toString(), bridgerDstAddress: bridger.address }, bridger.token);
          const tradeId: string = created.tradeId;
          const order = created.reqContractDetails;
          const depositTx = await chain.send(ORDER_CHAIN, 'orderPortal', bridger.key, 'createOrder', order, { orderParams: order.orderParams });
          const ready = proofReady(tradeId);
          const confirmedAt = performance.now();
          await call('POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridger.token);
          await ready;
          depositToProof.push((performance.now() - confirmedAt) / 1000);
          const lock = await call('POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
          const lockTx = await asMaker(() => chain.send(AD_CHAIN, 'adManager', makerKey, 'lockForOrder', lock, { orderParams: lock.orderParams }));
          await call('POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken);
          if (KEEPER) {
            // Both parties gone: the keeper sends both unlocks and the trade settles without them.
            await settledByKeeper(knex, tradeId);
            continue;
          }
          const makerUnlock = await call('POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(makerKey, order.orderHash) }, makerToken);
          const adUnlockTx = await asMaker(() => chain.send(AD_CHAIN, 'adManager', makerKey, 'unlock', makerUnlock, makerUnlock));
          await call('POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlockTx }, makerToken);
          const bridgerUnlock = await call('POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridger.key, order.orderHash) }, bridger.token);
          const orderUnlockTx = await chain.send(ORDER_CHAIN, 'orderPortal', bridger.key, 'unlock', bridgerUnlock, bridgerUnlock);
          await call('POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, bridger.token);
        } catch (error) {
          // A failed trade is reported, named, and does not stop the other lanes.
          failures.push(error instanceof Error ? error.message : String(error));
        }
      }
    }));
    const minutes = (performance.now() - started) / 60_000;
    const cpu = cpuSpent(cpuBefore, cpuByRole(process.pid, ROLES, 'client'));
    polling = false;
    await poller;
    // Backends report their statistics when idle, at most once a second.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const clientTransactions = clientStatements - clientBefore;
    const dbCounts = { ...countsSpent(dbBefore, await databaseCounts(knex)), clientTransactions };
    await logStatements(false);
    const workflowEvents = temporal ? await historyEventCounts(temporal.address) : undefined;
    const proofSeconds = await meanProofSeconds(proverMetrics);
    const settled = Number((await knex('trades').where({ status: 'SETTLED' }).count({ n: '*' }))[0]!.n);
    const keeperSends = KEEPER ? Number((await knex('keeper_sends').where({ status: 'confirmed' }).count({ n: '*' }))[0]!.n) : undefined;
    return { name, trades: settled, keeperSends, settledPerMinute: settled / minutes, depositToProof, calls, cpu, database: dbCounts, workflowEvents, proofSeconds, idleRate, seconds: minutes * 60, failures, load: loadavg() };
  } finally {
    for (const child of processes) await stopped(child, 'SIGTERM');
    for (const stop of stops) await stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The registry with each chain read through `count` spellings of its one RPC URL (distinct providers to the service), all required to agree. */
function withProviders<T extends { chains: Array<{ rpcUrl?: string }> }>(registry: T, count: number): T {
  if (count <= 1) return registry;
  const hosts = ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]'].slice(0, count);
  const chains = registry.chains.map(({ rpcUrl, ...chain }) => (rpcUrl === undefined ? chain
    : { ...chain, rpcUrls: hosts.map((host) => rpcUrl.replace('127.0.0.1', host)), rpcQuorum: hosts.length }));
  return { ...registry, chains };
}

/** Waits (up to 3 minutes) until the keeper settled `tradeId`: both unlocks sent, verified and applied. */
async function settledByKeeper(knex: Knex, tradeId: string): Promise<void> {
  const until = Date.now() + 180_000;
  while (Date.now() < until) {
    const row = await knex('trades').where({ id: tradeId }).first('status');
    if (row?.status === 'SETTLED') return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const sends = await knex('keeper_sends').where({ trade_id: tradeId }).select('action', 'side', 'status', 'last_error');
  throw new Error(`trade ${tradeId} not settled by the keeper within 3 minutes: ${JSON.stringify(sends)}`);
}

/**
 * The mean time of a proof in the pool during the run, summed over its phases (the prover's
 * `relayer_prover_{witness,prove,verify}_duration_seconds`, sum over count, all provers).
 */
async function meanProofSeconds(urls: string[]): Promise<number | undefined> {
  let seconds = 0;
  let proofs = 0;
  for (const url of urls) {
    const text = await fetch(url).then((r) => r.text()).catch(() => '');
    const value = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN);
    for (const phase of ['witness', 'prove', 'verify']) seconds += value(`relayer_prover_${phase}_duration_seconds_sum`) || 0;
    proofs += value('relayer_prover_prove_duration_seconds_count') || 0;
  }
  return proofs > 0 ? seconds / proofs : undefined;
}

interface DatabaseCounts {
  transactions: number;
  written: Record<string, number>;
  /** Of `transactions`, this bench client's own (its proof-ready reads, the counts' own statements). */
  clientTransactions?: number;
}

/** Committed and rolled-back transactions of the bench's database (each statement outside a transaction is one), and rows inserted, updated or deleted per table (pg-boss's under `pgboss.`). */
async function databaseCounts(knex: Knex): Promise<DatabaseCounts> {
  const [db] = (await knex.raw('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()')).rows;
  const tables = (await knex.raw(
    "SELECT CASE WHEN schemaname = 'public' THEN relname ELSE schemaname || '.' || relname END AS name, n_tup_ins + n_tup_upd + n_tup_del AS n FROM pg_stat_user_tables",
  )).rows as Array<{ name: string; n: string }>;
  return { transactions: Number(db.n), written: Object.fromEntries(tables.map((t) => [t.name, Number(t.n)])) };
}

function countsSpent(before: DatabaseCounts, after: DatabaseCounts): DatabaseCounts {
  return {
    transactions: after.transactions - before.transactions,
    written: Object.fromEntries(Object.entries(after.written).map(([name, n]) => [name, n - (before.written[name] ?? 0)]).filter(([, n]) => (n as number) > 0)),
  };
}

/** Every trade workflow's history, its events counted by type (EVENT_TYPE_ prefix dropped). */
async function historyEventCounts(address: string): Promise<Record<string, number>> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    const counts: Record<string, number> = {};
    for await (const workflow of client.workflow.list({ query: "WorkflowType = 'tradeWorkflow'" })) {
      const history = await client.workflow.getHandle(workflow.workflowId, workflow.runId).fetchHistory();
      for (const event of (JSON.parse(historyToJSON(history)) as { events: Array<{ eventType: string }> }).events) {
        const name = event.eventType.replace(/^EVENT_TYPE_/, '');
        counts[name] = (counts[name] ?? 0) + 1;
      }
    }
    return counts;
  } finally {
    await connection.close();
  }
}

/**
 * The floor: the same number of proofs through a pool of the same size, nothing else: each
 * proof's time, the pool's size, and the CPU one proof costs (this process and its pool threads).
 */
async function baseline(): Promise<{ times: number[]; poolSize: number; cpuMsPerProof: number }> {
  const pool = new ProverPool({ size: Number(process.env.PROVER_POOL_SIZE ?? 0) || undefined });
  await pool.ready();
  const times: number[] = [];
  // This process (its pool threads verify each proof) and the native proving processes the threads
  // spawn (read from /proc before the pool closes them; process.cpuUsage does not see them).
  const cpuNow = () => cpuByRole(process.pid, NATIVE_PROVER_ROLE, 'client');
  const cpuBefore = cpuNow();
  let cpu: Record<string, number>;
  try {
    for (let i = 0; i < Math.min(TRADES, 50); i++) {
      const t = performance.now();
      await pool.prove(sampleProofInput().input);
      times.push((performance.now() - t) / 1000);
    }
    cpu = cpuSpent(cpuBefore, cpuNow());
  } finally {
    await pool.close();
  }
  const seconds = Object.values(cpu).reduce((a, b) => a + b, 0);
  return { times, poolSize: pool.size, cpuMsPerProof: (seconds * 1000) / Math.max(1, times.length) };
}

const fmt = (s: number, digits = 2) => (Number.isFinite(s) ? s.toFixed(digits) : '-');
const load = loadavg().map((l) => l.toFixed(1)).join(' ');
const results: Result[] = [];
for (const name of ORCHESTRATORS) results.push(await runOrchestrator(name));
const { times: bare, poolSize, cpuMsPerProof } = await baseline();
// The queueing floor of deposit -> proof: with a proof per lane queued at once on a pool of
// `poolSize`, the last is ready after lanes x bare proof / pool size (e.g. 25 x 0.29 / 2 = 3.6 s).
const floor = (CONCURRENCY * percentile(bare, 50)) / Math.max(1, poolSize);

console.log(`\n${TRADES} trades, ${CONCURRENCY} lanes (fresh wallets), ${PROVIDERS} RPC provider(s) per chain (quorum ${PROVIDERS}), ${PROVERS} prover process(es) on Temporal; devnet, one machine of ${cpus().length} CPUs; load average at start ${load}, at end ${loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
console.log('| run | settled | failed | settled/min | deposit->proof p50 s | p95 s |');
console.log('|---|---|---|---|---|---|');
for (const r of results) console.log(`| ${r.name} | ${r.trades} | ${r.failures.length} | ${r.settledPerMinute.toFixed(1)} | ${fmt(percentile(r.depositToProof, 50))} | ${fmt(percentile(r.depositToProof, 95))} |`);
console.log(`| baseline: bare proofs, same pool, one at a time | - | - | - | ${fmt(percentile(bare, 50))} | ${fmt(percentile(bare, 95))} |`);
console.log(`\nQueueing floor of deposit->proof: ${CONCURRENCY} lanes x ${fmt(percentile(bare, 50))} s bare proof / pool of ${poolSize} = ${fmt(floor)} s`);
for (const r of results) {
  console.log(`  ${r.name}: p95 ${fmt(percentile(r.depositToProof, 95))} s = ${fmt(percentile(r.depositToProof, 95) / floor)} x the floor (target <= 1.5); load average at the run's end ${r.load.map((l) => l.toFixed(1)).join(' ')}`);
}
// On a loaded machine a proof during the run takes longer than the bare ones measured after it:
// the same floor from the run's own proof times (the prover's metrics) separates slow proofs from queueing.
for (const r of results) {
  if (r.proofSeconds === undefined) continue;
  const own = (CONCURRENCY * r.proofSeconds) / Math.max(1, poolSize);
  console.log(`  ${r.name}: a proof took ${fmt(r.proofSeconds)} s in the pool during the run (mean, prover metrics): floor ${fmt(own)} s, p95 = ${fmt(percentile(r.depositToProof, 95) / own)} x it`);
}

if (KEEPER) {
  console.log('\nThe keeper (BENCH_KEEPER=1: both unlocks its own; its CPU is in the api column embedded, the worker column on Temporal):\n');
  for (const r of results) console.log(`  ${r.name}: ${fmt((r.keeperSends ?? 0) / Math.max(1, r.trades), 2)} keeper transactions per settled trade`);
}
console.log('\nAPI calls, milliseconds (client-side, through the devnet client):\n');
console.log(`| call | ${results.map((r) => `${r.name} n | p50 | p95`).join(' | ')} |`);
console.log(`|---|${results.map(() => '---|---|---').join('|')}|`);
const templates = [...new Set(results.flatMap((r) => [...r.calls.keys()]))].sort();
for (const t of templates) {
  console.log(`| ${t} | ${results.map((r) => { const v = r.calls.get(t) ?? []; return `${v.length} | ${fmt(percentile(v, 50), 1)} | ${fmt(percentile(v, 95), 1)}`; }).join(' | ')} |`);
}

console.log('\nCPU milliseconds per settled trade, by process:\n');
const roles = [...new Set(results.flatMap((r) => Object.keys(r.cpu)))];
console.log(`| run | ${roles.join(' | ')} | total |`);
console.log(`|---|${roles.map(() => '---').join('|')}|---|`);
for (const r of results) {
  const per = (s: number) => fmt((s * 1000) / Math.max(1, r.trades), 0);
  console.log(`| ${r.name} | ${roles.map((role) => per(r.cpu[role] ?? 0)).join(' | ')} | ${per(Object.values(r.cpu).reduce((a, b) => a + b, 0))} |`);
}
console.log(`\nOf which idle (each process's CPU per second with no trade running, over ${IDLE_SECONDS} s before the run, times the run's length):\n`);
console.log(`| run | ${roles.join(' | ')} | run s |`);
console.log(`|---|${roles.map(() => '---').join('|')}|---|`);
for (const r of results) {
  console.log(`| ${r.name} | ${roles.map((role) => fmt(((r.idleRate[role] ?? 0) * r.seconds * 1000) / Math.max(1, r.trades), 0)).join(' | ')} | ${fmt(r.seconds, 0)} |`);
}
console.log('\nPostgreSQL per settled trade (pg_stat_database, pg_stat_user_tables): transactions (a statement outside one counts as one; all of the database\'s, then the service\'s own without this bench client\'s), rows written by table:\n');
for (const r of results) {
  const per = (n: number) => (n / Math.max(1, r.trades)).toFixed(1);
  const tables = Object.entries(r.database.written).sort((a, b) => b[1] - a[1]).map(([name, n]) => `${name} ${per(n)}`).join(', ');
  const client = r.database.clientTransactions ?? 0;
  console.log(`- ${r.name}: ${per(r.database.transactions)} transactions, **the service's own ${per(r.database.transactions - client)}** (the bench client's ${per(client)}); rows written ${per(Object.values(r.database.written).reduce((a, b) => a + b, 0))}: ${tables}`);
}
for (const r of results) {
  if (!r.workflowEvents) continue;
  const per = (n: number) => (n / Math.max(1, r.trades)).toFixed(1);
  const events = Object.entries(r.workflowEvents).sort((a, b) => b[1] - a[1]).map(([name, n]) => `${name} ${per(n)}`).join(', ');
  console.log(`- ${r.name} workflow history events per trade: ${per(Object.values(r.workflowEvents).reduce((a, b) => a + b, 0))}: ${events}`);
}
// The service's own CPU (not the chains', not this client's) against what a proof costs.
const SERVICE_ROLES = ['api', 'worker', 'prover', 'postgres', 'temporal'];
console.log(`\nService CPU per settled trade (${SERVICE_ROLES.join(' + ')}) against one bare proof's CPU (${fmt(cpuMsPerProof, 0)} ms, baseline) and the prover process's CPU per trade:\n`);
console.log('| run | service ms/trade | x bare proof CPU | prover process ms/trade | x prover process |');
console.log('|---|---|---|---|---|');
for (const r of results) {
  const perTrade = (role: string) => ((r.cpu[role] ?? 0) * 1000) / Math.max(1, r.trades);
  const service = SERVICE_ROLES.reduce((sum, role) => sum + perTrade(role), 0);
  const prover = perTrade('prover');
  console.log(`| ${r.name} | ${fmt(service, 0)} | ${fmt(service / cpuMsPerProof)} | ${prover > 0 ? fmt(prover, 0) : '- (in the api)'} | ${prover > 0 ? fmt(service / prover) : '-'} |`);
}
for (const r of results) for (const failure of new Set(r.failures)) console.log(`\n${r.name} failure (${r.failures.filter((f) => f === failure).length}x): ${failure}`);
process.exit(0);
