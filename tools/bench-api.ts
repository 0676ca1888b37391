/**
 * `npm run bench:api`: read-API throughput and latency against a bare Express handler, in one run.
 *
 * Seeds 10,000 ads (and as many trades) into a fresh database on an embedded PostgreSQL, starts
 * the real service and, beside it, a bare Express app answering a constant JSON; then drives
 * each with autocannon (in a child process, so the load generator does not share the server's
 * process) for BENCH_SECONDS (default 10) at BENCH_CONNECTIONS (default 100).
 * Prints requests/s, p50/p99 latency, the ratios to the bare handlers (constant JSON, constant copy
 * of an ads page), the API's and PostgreSQL's CPU per request, and the ads query plan.
 * BENCH_ONLY=<part of a target's name> runs a subset; BENCH_PROFILE=<dir> writes a CPU profile of
 * each target's measured window (summarise it with `npx tsx tools/profile-summary.ts <file>`).
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import express from 'express';
import { pino } from 'pino';
import { loadConfig } from '../config.ts';
import { startEmbeddedDatabase } from '../db/embedded.ts';
import { createKnex, migrateToLatest } from '../db/knex.ts';
import { seedAdsAndTrades } from './seed-ads.ts';
import { importRegistry } from '../registry/import.ts';
import { start } from '../runtime/service.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const ADS = Number(process.env.BENCH_ADS ?? 10_000);
/** Only targets whose name contains this (e.g. `/v1/ads`); every target when unset. */
const ONLY = process.env.BENCH_ONLY;
/** A directory: each target's measured window is CPU-profiled into `<dir>/<target>.cpuprofile`. */
const PROFILE_DIR = process.env.BENCH_PROFILE;

interface Result { name: string; rps: number; p50: number; p99: number; errors: number; non2xx: number; cpuMicrosPerRequest: number; dbCpuMicrosPerRequest: number }

const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

/** autocannon in a child process: the load generator never shares this process's CPU or event loop. */
async function autocannon(url: string, connections: number, seconds: number) {
  const { stdout } = await promisify(execFile)(process.execPath, [AUTOCANNON, '--json', '-c', String(connections), '-d', String(seconds), url], {
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    errors: number;
    timeouts: number;
    non2xx: number;
  };
}

/**
 * CPU (µs) spent so far by the embedded PostgreSQL this process started: the postmaster (with its
 * reaped children) and its live backends, from Linux's /proc (clock ticks of 10 ms). NaN elsewhere.
 * Work moved from the API into SQL shows up here, not in the API's figure.
 */
function databaseCpuMicros(): number {
  const stats: { pid: string; ppid: string; own: number; reaped: number }[] = [];
  try {
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      let stat: string;
      try { stat = readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { continue; }
      if (!stat.includes('(postgres)')) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      stats.push({ pid, ppid: fields[1]!, own: Number(fields[11]) + Number(fields[12]), reaped: Number(fields[13]) + Number(fields[14]) });
    }
  } catch {
    return Number.NaN;
  }
  const postmaster = stats.find((entry) => entry.ppid === String(process.pid));
  if (!postmaster) return Number.NaN;
  const ticks = postmaster.own + postmaster.reaped + stats.filter((entry) => entry.ppid === postmaster.pid).reduce((sum, entry) => sum + entry.own, 0);
  return ticks * 10_000;
}

/** Profiles this process (the API) while `run` runs, into PROFILE_DIR, when it is set. */
async function profiled<T>(name: string, run: () => Promise<T>): Promise<T> {
  if (!PROFILE_DIR) return run();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 1000 });
  await session.post('Profiler.start');
  try {
    return await run();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(PROFILE_DIR, { recursive: true });
    writeFileSync(path.join(PROFILE_DIR, `${name.replace(/[^\w]+/g, '_').replace(/^_|_$/g, '')}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

async function drive(name: string, url: string): Promise<Result | undefined> {
  if (ONLY !== undefined && !name.includes(ONLY)) return undefined;
  // Warm-up: JIT, connection pools, prepared statements, the registry cache.
  await autocannon(url, 10, 2);
  const cpuBefore = process.cpuUsage();
  const dbBefore = databaseCpuMicros();
  const result = await profiled(name, () => autocannon(url, CONNECTIONS, SECONDS));
  const cpu = process.cpuUsage(cpuBefore);
  const dbCpu = databaseCpuMicros() - dbBefore;
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    // CPU this process (the API) spent per request: steadier than req/s when the machine is shared.
    cpuMicrosPerRequest: (cpu.user + cpu.system) / Math.max(1, result.requests.total),
    dbCpuMicrosPerRequest: dbCpu / Math.max(1, result.requests.total),
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'relayer-bench-'));
  chmodSync(dir, 0o755);
  const pg = await startEmbeddedDatabase({ dataDir: path.join(dir, 'pg'), port: 41000 + Math.floor(Math.random() * 9000), persistent: false });
  const admin = createKnex(pg.url, 1);
  await admin.raw('CREATE DATABASE bench');
  await admin.destroy();
  const url = pg.url.replace(/\/postgres$/, '/bench');
  const knex = createKnex(url, 2);
  await migrateToLatest(knex);
  await importRegistry(knex, JSON.parse(readFileSync('deploy/devnet/registry.json', 'utf8')));
  console.log(`seeding ${ADS} ads and ${ADS} trades...`);
  const { routeIds } = await seedAdsAndTrades(knex, ADS);
  const sampleAd = await knex('ads').where({ base_status: 'ACTIVE' }).first('id');
  const plan = await knex.raw(
    `EXPLAIN ANALYZE SELECT * FROM ads WHERE route_id = ? AND status IN ('ACTIVE','PAUSED','EXHAUSTED','CLOSED') ORDER BY created_at DESC, id DESC LIMIT 26`,
    [routeIds[0]!],
  );
  await knex.destroy();

  const service = await start(
    loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: url, DATA_DIR: dir, LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '1000000' }),
    pino({ level: 'silent' }),
  );
  const bare = express();
  const constant = { data: [{ id: 'constant' }], nextCursor: null };
  bare.get('/', (_req, res) => { res.json(constant); });
  const bareServer = bare.listen(0, '127.0.0.1');
  await new Promise((resolve) => bareServer.once('listening', resolve));
  const bareUrl = `http://127.0.0.1:${(bareServer.address() as AddressInfo).port}/`;

  // A second bare handler answering a constant copy of a real /v1/ads page: separates what the
  // payload itself costs (serialising and writing ~24 KB) from what the service adds.
  const samplePage = await (await fetch(`${service.url}/v1/ads`)).text();
  bare.get('/page', (_req, res) => { res.type('json').send(samplePage); });

  const results: Result[] = [];
  const targets: [string, string][] = [
    ['bare express (constant JSON)', bareUrl],
    [`bare express (constant ${Math.round(samplePage.length / 1024)} KB ads page)`, `${bareUrl}page`],
    // What every request pays before any handler: the middleware stack, routing, a 404 body.
    ['GET /v1/nothing (404, stack only)', `${service.url}/v1/nothing`],
    ['GET /v1/ads', `${service.url}/v1/ads`],
    ['GET /v1/ads?routeId&status', `${service.url}/v1/ads?routeId=${routeIds[0]}&status=ACTIVE`],
    ['GET /v1/ads/:id', `${service.url}/v1/ads/${sampleAd.id}`],
    ['GET /v1/trades/all?minAmount', `${service.url}/v1/trades/all?minAmount=5000000`],
  ];
  try {
    for (const [name, target] of targets) {
      const result = await drive(name, target);
      if (result) results.push(result);
    }
  } finally {
    bareServer.close();
    await service.stop();
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  // Ratios to the bare handlers (when they ran): constant JSON, and the constant copy of an ads page.
  const baseline = results.find((r) => r.name.includes('constant JSON'))?.rps ?? Number.NaN;
  const pageBaseline = results.find((r) => r.name.includes('ads page'))?.rps ?? Number.NaN;
  console.log(`\n${SECONDS}s per target, ${CONNECTIONS} connections, ${ADS} ads; node ${process.version}, ${(await import('node:os')).cpus().length} CPUs`);
  console.log('target                             req/s     p50 ms  p99 ms  ratio  to page  API CPU µs/req  DB CPU µs/req  errors  non-2xx');
  for (const r of results) {
    console.log(
      `${r.name.padEnd(34)} ${r.rps.toFixed(0).padStart(7)}  ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)}  ${(r.rps / baseline).toFixed(2).padStart(5)}  ${(r.rps / pageBaseline).toFixed(2).padStart(7)}  ${r.cpuMicrosPerRequest.toFixed(0).padStart(14)}  ${r.dbCpuMicrosPerRequest.toFixed(0).padStart(13)}  ${String(r.errors).padStart(6)}  ${String(r.non2xx).padStart(7)}`,
    );
  }
  console.log('\nplan of the ads list query (route filter):');
  for (const row of plan.rows) console.log(`  ${row['QUERY PLAN']}`);
}

main().then(() => process.exit(0), (error) => {
  console.error(error);
  process.exit(1);
});
