import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { dropDatabase as dropScratchDatabase } from '../../db/drop-database.ts';
import { createKnex } from '../../db/knex.ts';
import { startDevnet, type Devnet } from '../../devnet/index.ts';
import { dashboards } from '../../deploy/grafana/dashboards.ts';
import { dashboardQueries } from '../../deploy/grafana/model.ts';
import { localScrapeConfig } from '../../deploy/prometheus/local-config.ts';
import { importRegistry } from '../../registry/import.ts';
import { ROOT } from '../support/deploy-tools.ts';
import { AD_CHAIN, devnetClient, eventually, ORDER_CHAIN, signOrderHash, tradeParties, type DevnetClient } from '../support/devnet-client.ts';
import { exited, runScript, startPrometheus, startServed, startTemporal, stop, type Running, type Served } from '../support/local-stack.ts';
import { loginEvm, type JsonResponse } from '../support/wallets.ts';
import { DEVELOPMENT_VK_SHA256 } from '../support/proving-key.ts';

/**
 * The local stack, without containers: Temporal's dev server, and the processes started as compose
 * starts them (`npm run migrate`, then `npm run api`, `npm run worker` and two `npm run prover`,
 * production settings, over a real PostgreSQL and the two-chain devnet); Debian's Prometheus
 * scraping all of them and Temporal with a config generated from the compose stack's
 * prometheus.yml and loading its alert rules; one whole trade settled and two more proved;
 * then every PromQL expression of the dashboards and the alerts is evaluated against that
 * Prometheus and must return series with data.
 */

const { makerKey, bridgerKey, maker, bridger } = tradeParties();
const relayerKey = Wallet.createRandom().privateKey;


let workDir: string;
let databaseUrl: string;
let dropDatabase: () => Promise<void>;
let devnet: Devnet;
let chain: DevnetClient;
let temporal: Running & { address: string; metrics: string };
let api: Served & { url: string };
let worker: Served;
let provers: Served[];
let prometheus: Running & { url: string };
let scrapeJobs: { scraped: string[]; dropped: string[] };

const productionEnv = (): Record<string, string> => ({
  NODE_ENV: 'production', RELAYER_SIGNER_ALLOW_ENV: 'true', KEEPER_ENABLED: 'false', DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'info',
  // Production wants the public site's names (a wallet shows them); nothing resolves them here.
  SIWE_DOMAIN: 'relayer.example.org', SIWE_URI: 'https://relayer.example.org', SEP10_HOME_DOMAIN: 'relayer.example.org', SEP10_WEB_AUTH_DOMAIN: 'relayer.example.org',
  RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000', PROVER_POOL_SIZE: '1',
  // The committed development proving key in a production-mode test stack (README, "Proving key").
  PROVING_KEY_ALLOW_DEVELOPMENT: 'true', PROVING_KEY_VK_SHA256: DEVELOPMENT_VK_SHA256,
});

/** The api's own secrets: only it signs and verifies; the worker, provers and migrate get none (docs/configuration.md "Secrets per process"). */
const apiSecrets = {
  JWT_SECRET: randomBytes(48).toString('base64'), RELAYER_EVM_PRIVATE_KEY: relayerKey,
  RELAYER_STELLAR_SECRET: Keypair.random().secret(), SEP10_SIGNING_SECRET: Keypair.random().secret(),
};

async function request(method: string, route: string, body?: unknown, token?: string): Promise<JsonResponse> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${api.url}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

interface PromResult { status: string; error?: string; data: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] } }

async function query(expr: string): Promise<PromResult> {
  const res = await fetch(`${prometheus.url}/api/v1/query?${new URLSearchParams({ query: expr })}`);
  return res.json() as Promise<PromResult>;
}

/** An alert's expression with each threshold comparison made `bool`: the signal itself, firing or not. */
const asSignal = (expr: string) => expr.replace(/\s(>=|<=|==|!=|>|<)\s+(?!bool\b)/g, ' $1 bool ');

/** Every expression of the dashboards and alert rules, with where it is. */
function allExpressions(): { where: string; expr: string }[] {
  const rules = parse(readText('deploy/prometheus/alerts.yml')).groups.flatMap((g: any) => g.rules);
  return [
    ...dashboards.flatMap(dashboardQueries),
    ...rules.map((r: any) => ({ where: r.alert ? `alert ${r.alert}` : `record ${r.record}`, expr: asSignal(r.expr.trim()) })),
  ];
}
const readText = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

beforeAll(async () => {
  workDir = mkdtempSync(path.join(tmpdir(), 'relayer-stack-'));
  // An empty database: `npm run migrate` makes the schema, as the compose `migrate` service does.
  const adminUrl = inject('postgresAdminUrl');
  const name = `stack_${randomBytes(6).toString('hex')}`;
  const admin = createKnex(adminUrl, 1);
  await admin.raw(`CREATE DATABASE ${name}`);
  await admin.destroy();
  const database = new URL(adminUrl);
  database.pathname = `/${name}`;
  databaseUrl = database.toString();
  dropDatabase = async () => {
    const cleanup = createKnex(adminUrl, 1);
    await dropScratchDatabase(cleanup, name);
    await cleanup.destroy();
  };

  const migrate = runScript('migrate', productionEnv());
  const code = await exited(migrate.child);
  if (code !== 0) throw new Error(`npm run migrate exited ${code}:\n${migrate.output()}`);

  [devnet, temporal] = await Promise.all([
    startDevnet({ ports: [0, 0], relayerEvmAddress: new Wallet(relayerKey).address, domain: { name: 'ProofBridge', version: '1' } }),
    startTemporal(inject('temporalCli')),
  ]);
  const knex = createKnex(databaseUrl, 1);
  await importRegistry(knex, devnet.registry);
  await knex.destroy();
  chain = await devnetClient(devnet.rpcUrls, devnet.deployments);

  // One configuration for all, as the compose file and the ConfigMap give it; the secrets each role's own
  // (one Secret per role on Kubernetes): the worker and provers start holding no signing, SEP-10 or JWT key.
  const env = { ...productionEnv(), TEMPORAL_ADDRESS: temporal.address };
  // The worker sends the keeper's transactions (its own keys, given nobody else; the api on Temporal refuses them).
  worker = await startServed('worker', {
    ...env, KEEPER_ENABLED: 'true', KEEPER_EVM_PRIVATE_KEY: Wallet.createRandom().privateKey, KEEPER_STELLAR_SECRET: Keypair.random().secret(),
  });
  provers = await Promise.all([startServed('prover', env), startServed('prover', env)]);
  const started = await startServed('api', { ...env, ...apiSecrets });
  api = { ...started, url: started.url! };
  // /metrics only on its own port (METRICS_PORT), as in the compose stack and the manifests.
  expect((await fetch(`${api.url}/metrics`)).status).toBe(404);

  const local = localScrapeConfig({
    'relayer-api': [api.metrics], 'relayer-worker': [worker.metrics], 'relayer-prover': provers.map((p) => p.metrics), temporal: [temporal.metrics],
  }, { scrapeInterval: '1s' });
  scrapeJobs = local;
  const configFile = path.join(workDir, 'prometheus.yml');
  writeFileSync(configFile, local.yaml);
  prometheus = await startPrometheus(configFile, workDir);
}, 300_000);

afterAll(async () => {
  await stop(prometheus, false);
  await stop(api);
  await stop(worker);
  for (const prover of provers ?? []) await stop(prover);
  await stop(temporal, false);
  chain?.close();
  await devnet?.stop();
  await dropDatabase?.();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('the local stack: Temporal, api, worker and two provers as processes, a real Prometheus, one trade', () => {
  it('each process started in production with only its own secrets; a worker, prover or migrate given a signing, SEP-10 or JWT key refuses naming it', async () => {
    // The stack above runs: migrate, worker and provers with DATABASE_URL alone, the api with its four keys.
    expect(worker.metrics).toBeTruthy();
    expect((await fetch(`${api.url}/health`)).status).toBe(200);
    const env = { ...productionEnv(), TEMPORAL_ADDRESS: temporal.address };
    const cases = [['worker', 'JWT_SECRET'], ['prover', 'RELAYER_EVM_PRIVATE_KEY'], ['migrate', 'SEP10_SIGNING_SECRET']] as const;
    const runs = cases.map(([script, key]) => ({ script, key, run: runScript(script, { ...env, [key]: apiSecrets[key] }) }));
    for (const { script, key, run } of runs) {
      expect(await exited(run.child), `${script} given ${key}`).toBe(78);
      expect(run.output()).toContain(`${key}: the ${script} process does not use it and must not hold it in production`);
      expect(run.output()).not.toContain(apiSecrets[key]);
    }
  }, 120_000);

  it('Prometheus scrapes every job of the compose config (api, worker, both provers, Temporal) and loads the alert rules', async () => {
    expect(scrapeJobs.dropped).toEqual([]);
    const up = await eventually('every target up', () => query('up == 1'), (r) => r.data?.result.length === 5, 30_000);
    expect(up.data.result.map((s) => s.metric.job).sort()).toEqual(['relayer-api', 'relayer-prover', 'relayer-prover', 'relayer-worker', 'temporal']);
    const rules = await (await fetch(`${prometheus.url}/api/v1/rules`)).json() as any;
    const loaded = rules.data.groups.flatMap((g: any) => g.rules.map((r: any) => r.name));
    expect(loaded.sort()).toEqual(parse(readText('deploy/prometheus/alerts.yml')).groups.flatMap((g: any) => g.rules.map((r: any) => r.alert ?? r.record)).sort());
  });

  it('runs one trade to SETTLED and two more to proof-ready, through HTTP on the devnet', async () => {
    const asClient = { request: (p: string, init?: RequestInit) => fetch(`${api.url}${p}`, init) } as never;
    const makerToken = (await loginEvm(asClient, maker)).body.tokens.access;
    const bridgerToken = (await loginEvm(asClient, bridger)).body.tokens.access;
    const routes = await request('GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=TUSD`);
    const routeId = routes.body.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;

    const ad = await request('POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '1000' }, makerToken);
    expect(ad.status).toBe(200);
    await chain.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', 1000n);
    const adTx = await chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', ad.body);
    expect((await request('POST', `/v1/ads/${ad.body.adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);

    const deposit = async () => {
      await chain.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
      const created = await request('POST', '/v1/trades/create', { adId: ad.body.adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
      expect(created.status).toBe(200);
      const { tradeId, reqContractDetails: order } = created.body;
      const depositTx = await chain.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
      expect((await request('POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);
      return { tradeId, order };
    };

    const { tradeId, order } = await deposit();
    // A client error for the 4xx panels: the Bridger may not lock.
    expect((await request('POST', `/v1/trades/${tradeId}/lock`, undefined, bridgerToken)).status).toBe(403);
    const lock = await request('POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
    expect(lock.status).toBe(200);
    const lockTx = await chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
    expect((await request('POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken)).status).toBe(200);
    const makerUnlock = await eventually('the proof', () => request('POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(makerKey!.privateKey, order.orderHash) }, makerToken), (r) => r.status !== 409);
    expect(makerUnlock.status).toBe(200);
    const adUnlockTx = await chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'unlock', makerUnlock.body, makerUnlock.body);
    expect((await request('POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlockTx }, makerToken)).status).toBe(200);
    const bridgerUnlock = await request('POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridgerKey!.privateKey, order.orderHash) }, bridgerToken);
    expect(bridgerUnlock.status).toBe(200);
    const orderUnlockTx = await chain.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'unlock', bridgerUnlock.body, bridgerUnlock.body);
    expect((await request('POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, bridgerToken)).status).toBe(200);
    expect((await request('GET', `/v1/trades/${tradeId}`)).body.status).toBe('SETTLED');

    // Two more deposits, each proof scraped before the next starts: with two provers one of them
    // proves twice, so its counters (created at its first proof) have a rate.
    const scraped = async (n: number) => {
      for (const metric of ['relayer_prover_proofs_total{result="ok"}', 'temporal_activity_schedule_to_start_latency_count{task_queue="proofs"}']) {
        await eventually(`${metric} at ${n}`, () => query(`sum(${metric})`), (r) => r.data.result[0]?.value[1] === String(n), 60_000);
      }
    };
    await scraped(1);
    for (const n of [2, 3]) {
      const next = await deposit();
      await scraped(n);
      expect((await request('GET', `/v1/trades/${next.tradeId}`)).body.status).toBe('DEPOSITED');
    }
    await eventually('trades by status scraped', () => query('max by (status) (relayer_trades)'), (r) => r.data.result.length >= 2, 30_000);
  }, 240_000);

  it('every dashboard query and alert expression returns series with data from the running processes', async () => {
    // The proof SLI counts deposits confirmed over a window that ends a minute ago (a proof has 60 s):
    // until the first deposit is that old, its ratios have nothing to divide by.
    await eventually('a deposit over a minute old', () => query('sum(increase(relayer_trade_events_total{event="DEPOSIT_CONFIRMED"}[5m] offset 1m))'),
      (r) => Number(r.data.result[0]?.value[1] ?? 0) > 0, 150_000);
    const failures: string[] = [];
    const evaluated = allExpressions();
    expect(evaluated.length).toBeGreaterThan(20);
    expect(evaluated.filter((e) => /\btemporal_/.test(e.expr)).length).toBeGreaterThan(0);
    for (const { where, expr } of evaluated) {
      const result = await query(expr);
      if (process.env.STACK_TEST_VERBOSE) console.log(where, JSON.stringify(result.data?.result.map((r) => [r.metric, r.value[1]])));
      if (result.status !== 'success') failures.push(`${where}: ${result.error}\n  ${expr}`);
      else if (!result.data.result.some((s) => Number.isFinite(Number(s.value[1])))) {
        failures.push(`${where}: ${result.data.result.length} series, none with a finite value\n  ${expr}`);
      }
    }
    expect(failures).toEqual([]);
    // The prover pods' own series moved during the run, not only sat at zero. (Their busy-workers
    // gauge is sampled only at scrape time: a native proof of a few hundred ms is seldom caught.)
    const proved = await query('sum(relayer_prover_proofs_total{result="ok"})');
    expect(Number(proved.data.result[0]!.value[1]), 'relayer_prover_proofs_total').toBeGreaterThanOrEqual(3);
    // The alerts as written evaluate too (quiet here: nothing is wrong with this stack).
    const alerts = parse(readText('deploy/prometheus/alerts.yml')).groups.flatMap((g: any) => g.rules);
    for (const rule of alerts) expect((await query(rule.expr)).status, rule.alert ?? rule.record).toBe('success');
  }, 240_000);
});
