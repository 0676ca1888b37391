import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../db/embedded.ts';
import { createKnex, migrateToLatest } from '../../db/knex.ts';
import { eventually } from '../support/devnet-client.ts';
import { DEVELOPMENT_VK_SHA256 } from '../support/proving-key.ts';
import { startServiceProcess, startTemporalDevServer, stopped, type ServiceProcess } from '../support/temporal-stack.ts';

/**
 * Issue 30: every process's /metrics with PostgreSQL stopped. The worker and a prover (`npm run
 * worker` / `npm run prover` as their own OS processes, on Temporal's dev server) over a PostgreSQL
 * of their own, which is stopped under them: each scrape answers 200 at once with the prover's and
 * the Temporal SDK's metrics, the proofs backlog read from Temporal, and (the worker, which leads
 * the trade gauges) the gauges as last read with their age. Before, each scrape ran the trade
 * gauges' queries and failed, so every target read `up == 0`. Both run in production mode with only
 * their own settings (DATABASE_URL, TEMPORAL_ADDRESS, the proving key's): no signer, JWT, SEP-10 or
 * SIWE setting, which they do not use.
 */

let dir: string;
let port: number;
let database: EmbeddedDatabase;
const children = new Set<ChildProcess>();
let worker: ServiceProcess;
let prover: ServiceProcess;
let temporal: ChildProcess;

const startDatabase = () => startEmbeddedDatabase({ dataDir: path.join(dir, 'pg'), port, persistent: true });

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'relayer-metrics-outage-'));
  chmodSync(dir, 0o755);
  port = 40000 + Math.floor(Math.random() * 20000);
  const [db, server] = await Promise.all([startDatabase(), startTemporalDevServer(inject('temporalCli'))]);
  database = db;
  temporal = server.process;
  const knex = createKnex(database.url, 1);
  await migrateToLatest(knex);
  await knex.destroy();
  // As deployed: production mode, and nothing but their own settings (no signer, JWT, SEP-10 or SIWE one).
  const env = {
    NODE_ENV: 'production', KEEPER_ENABLED: 'false', DATABASE_URL: database.url, DATA_DIR: path.join(dir, 'data'), TEMPORAL_ADDRESS: server.address, METRICS_SAMPLE_SECONDS: '1',
    PROVING_KEY_VK_SHA256: DEVELOPMENT_VK_SHA256, PROVING_KEY_ALLOW_DEVELOPMENT: 'true', PROVER_POOL_SIZE: '1',
  };
  worker = await startServiceProcess('worker', env, { only: true });
  children.add(worker.child);
  prover = await startServiceProcess('prover', env, { only: true });
  children.add(prover.child);
}, 300_000);

afterAll(async () => {
  for (const child of children) await stopped(child);
  if (temporal) await stopped(temporal);
  await database?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function scrape(proc: ServiceProcess): Promise<{ status: number; text: string; ms: number }> {
  const began = performance.now();
  const res = await fetch(proc.metricsUrl, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  return { status: res.status, text, ms: performance.now() - began };
}
const sample = (text: string, name: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
};
const has = (text: string, name: string) => new RegExp(`^${name}(\\{| )`, 'm').test(text);

describe('/metrics of the worker and a prover with PostgreSQL stopped', () => {
  it('answers 200 at once on both, with the prover, Temporal and backlog metrics and the trade gauges as last read', async () => {
    await eventually('the worker leads the trade gauges', () => scrape(worker), ({ text }) => has(text, 'relayer_trades_stuck') && sample(text, 'relayer_db_up') === 1, 60_000);
    await eventually('the prover reaches its database', () => scrape(prover), ({ text }) => sample(text, 'relayer_db_up') === 1, 60_000);

    await database.stop();
    for (const proc of [worker, prover]) await eventually('relayer_db_up 0', () => scrape(proc), ({ text }) => sample(text, 'relayer_db_up') === 0, 30_000);
    const times: number[] = [];
    for (const proc of [worker, prover]) {
      for (let i = 0; i < 5; i++) {
        const { status, text, ms } = await scrape(proc);
        times.push(ms);
        expect(status).toBe(200);
        for (const name of ['relayer_prover_queue_depth', 'relayer_prover_busy_workers', 'process_cpu_seconds_total']) expect(has(text, name), name).toBe(true);
        // The Temporal SDK's own metrics (core's Prometheus exporter, forwarded).
        expect(text).toMatch(/^temporal_\w+/m);
      }
    }
    const worker_ = (await scrape(worker)).text;
    expect(has(worker_, 'relayer_proof_backlog_tasks'), 'the proofs backlog, read from Temporal').toBe(true);
    expect(has(worker_, 'relayer_trades_stuck'), 'the trade gauges as last read').toBe(true);
    expect(sample(worker_, 'relayer_trade_gauges_age_seconds')!).toBeGreaterThan(0);
    // The prover runs no scheduled jobs: it never serves the trade gauges.
    expect(has((await scrape(prover)).text, 'relayer_trades_stuck')).toBe(false);
    console.log(`/metrics with PostgreSQL down (worker x5, prover x5): ${times.map((t) => t.toFixed(1)).join(', ')} ms`);
    expect(Math.max(...times)).toBeLessThan(1000);

    database = await startDatabase();
    await eventually('fresh trade gauges after the restart', () => scrape(worker), ({ text }) => sample(text, 'relayer_db_up') === 1 && sample(text, 'relayer_trade_gauges_age_seconds')! < 3, 60_000);
  }, 240_000);
});
