/**
 * `npm run bench:api`: read-API throughput and latency against a bare Express handler, in one run.
 *
 * Seeds 10,000 ads (and as many trades) into a fresh database on an embedded PostgreSQL, starts
 * the real service and, beside it, a bare Express app answering a constant JSON; then drives
 * each with autocannon (in a child process, so the load generator does not share the server's
 * process) for BENCH_SECONDS (default 10) at BENCH_CONNECTIONS (default 100).
 * Prints requests/s, p50/p99 latency, the ratios to the bare handlers (constant JSON, constant copy
 * of an ads page), the API's and PostgreSQL's CPU per request, and the ads query plan: each the
 * median of BENCH_ROUNDS (default 3) rounds in which the targets take turns.
 * The service runs with the books audit's cron off (BENCH_AUDIT=on runs it), so a tick landing in a
 * measured window does not count the audit's chain reads as the reads' cost.
 * BENCH_ONLY=<part of a target's name> runs a subset (and the bare ads-page handler, for the ratios); BENCH_PROFILE=<dir> writes a CPU profile of
 * each target's measured window (summarise it with `npx tsx tools/profile-summary.ts <file>`).
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { PerformanceObserver } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { pino } from 'pino';
import { loadConfig } from '../config/config.ts';
import { startEmbeddedDatabase } from '../db/embedded.ts';
import { createKnex, migrateToLatest } from '../db/knex.ts';
import { cpuByRole, type Roles } from './process-cpu.ts';
import { seedAdsAndTrades } from './seed-ads.ts';
import { importRegistry } from '../registry/import.ts';
import { start } from '../entrypoints/service.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const ADS = Number(process.env.BENCH_ADS ?? 10_000);
/**
 * Every target is driven this many times, the targets taking turns, and each figure is the median
 * of its rounds; a ratio is taken within a round (the target against the bare handler driven just
 * before it), so a slow patch of a shared machine moves both sides of it.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Only targets whose name contains this (e.g. `/v1/ads`); every target when unset. */
const ONLY = process.env.BENCH_ONLY;
/** `on`: the books audit's cron runs in the service as it does by default (off: not part of a read's cost). */
const AUDIT = process.env.BENCH_AUDIT === 'on';
/** A directory: each target's measured window is CPU-profiled into `<dir>/<target>.cpuprofile`. */
const PROFILE_DIR = process.env.BENCH_PROFILE;

interface Result { name: string; rps: number; p50: number; p99: number; errors: number; non2xx: number; cpuMicrosPerRequest: number; dbCpuMicrosPerRequest: number; gcMicrosPerRequest: number }

const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
const LOAD_GENERATOR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'load-generator.mjs');

/**
 * autocannon in a child process: the load generator never shares this process's CPU or event loop.
 * Several URLs (of one server): each connection walks them in turn (`tools/load-generator.mjs`).
 */
async function autocannon(target: string | string[], connections: number, seconds: number) {
  const args = typeof target === 'string'
    ? [AUTOCANNON, '--json', '-c', String(connections), '-d', String(seconds), target]
    : [LOAD_GENERATOR, JSON.stringify({
      origin: new URL(target[0]!).origin, paths: target.map((url) => { const { pathname, search } = new URL(url); return pathname + search; }), connections, seconds,
    })];
  const { stdout } = await promisify(execFile)(process.execPath, args, { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    errors: number;
    timeouts: number;
    non2xx: number;
  };
}

/** The embedded PostgreSQL this process started: the postmaster and its backends. */
const DATABASE_ROLES: Roles = [['postgres', /postgres/]];

/**
 * CPU (µs) spent so far by the embedded PostgreSQL this process started (tools/process-cpu.ts: its
 * processes' times from Linux's /proc, ended backends counted through the postmaster). NaN where
 * there is no /proc. Work moved from the API into SQL shows up here, not in the API's figure.
 */
function databaseCpuMicros(): number {
  try {
    return cpuByRole(process.pid, DATABASE_ROLES).postgres! * 1e6;
  } catch {
    return Number.NaN;
  }
}

/** Profiles this process (the API) while `run` runs, into PROFILE_DIR, when it is set (first round only). */
async function profiled<T>(name: string, round: number, run: () => Promise<T>): Promise<T> {
  if (!PROFILE_DIR || round > 0) return run();
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

async function drive(name: string, url: string | string[], round: number): Promise<Result> {
  // Warm-up: JIT, connection pools, prepared statements, the registry cache.
  await autocannon(url, 10, 2);
  const cpuBefore = process.cpuUsage();
  const dbBefore = databaseCpuMicros();
  let gcMillis = 0;
  const gc = new PerformanceObserver((list) => { for (const entry of list.getEntries()) gcMillis += entry.duration; });
  gc.observe({ entryTypes: ['gc'] });
  const result = await profiled(name, round, () => autocannon(url, CONNECTIONS, SECONDS));
  gc.disconnect();
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
    // Pauses of the API's garbage collector (part of its CPU): how much the young generation copes.
    gcMicrosPerRequest: (gcMillis * 1000) / Math.max(1, result.requests.total),
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
  await importRegistry(knex, JSON.parse(readFileSync('devnet/registry.json', 'utf8')));
  console.log(`seeding ${ADS} ads and ${ADS} trades...`);
  const { routeIds } = await seedAdsAndTrades(knex, ADS);
  const sampleAds: { id: string }[] = await knex('ads').where({ base_status: 'ACTIVE' }).select('id').orderBy('id').limit(1000);
  const sampleAd = sampleAds[0]!;
  const plan = await knex.raw(
    `EXPLAIN ANALYZE SELECT * FROM ads WHERE route_id = ? AND status IN ('ACTIVE','PAUSED','EXHAUSTED','CLOSED') ORDER BY created_at DESC, id DESC LIMIT 26`,
    [routeIds[0]!],
  );
  await knex.destroy();

  const service = await start(
    loadConfig({
      PORT: '0', HOST: '127.0.0.1', DATABASE_URL: url, DATA_DIR: dir, LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '1000000',
      // The books audit's cron (every 5 minutes) would land in some measured windows and not others:
      // it walks the 10,000 seeded trades, reading chains that are not there, in this process, and
      // was half the API's CPU per request of the window it fell in. Off unless BENCH_AUDIT=on.
      BOOKS_AUDIT_CRON: AUDIT ? '*/5 * * * *' : 'off',
    }),
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

  const rounds: Result[][] = [];
  // Distinct reads: 100 pages of the ads list (followed by their cursors) and 1,000 ads by id.
  // Concurrent requests then seldom ask for the same read, so little is shared (db/prepared.ts).
  const pageUrls = [`${service.url}/v1/ads`];
  while (pageUrls.length < 100) {
    const { nextCursor } = await (await fetch(pageUrls[pageUrls.length - 1]!)).json() as { nextCursor: string | null };
    if (!nextCursor) break;
    pageUrls.push(`${service.url}/v1/ads?cursor=${nextCursor}`);
  }
  const adUrls = sampleAds.map((ad) => `${service.url}/v1/ads/${ad.id}`);

  const allTargets: [string, string | string[]][] = [
    ['bare express (constant JSON)', bareUrl],
    [`bare express (constant ${Math.round(samplePage.length / 1024)} KB ads page)`, `${bareUrl}page`],
    // What every request pays before any handler: the middleware stack, routing, a 404 body.
    ['GET /v1/nothing (404, stack only)', `${service.url}/v1/nothing`],
    ['GET /v1/ads', `${service.url}/v1/ads`],
    ['GET /v1/ads?routeId&status', `${service.url}/v1/ads?routeId=${routeIds[0]}&status=ACTIVE`],
    ['GET /v1/ads/:id', `${service.url}/v1/ads/${sampleAd.id}`],
    [`GET /v1/ads, ${pageUrls.length} pages`, pageUrls],
    [`GET /v1/ads/:id, ${adUrls.length} ads`, adUrls],
    ['GET /v1/trades/all?minAmount', `${service.url}/v1/trades/all?minAmount=5000000`],
  ];
  const targets = allTargets.filter(([name]) => ONLY === undefined || name.includes(ONLY) || name.includes('ads page'));
  try {
    for (let round = 0; round < ROUNDS; round += 1) {
      const results: Result[] = [];
      for (const [name, target] of targets) results.push(await drive(name, target, round));
      rounds.push(results);
    }
  } finally {
    bareServer.close();
    await service.stop();
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  // Medians over the rounds; ratios within each round, to that round's bare handlers.
  const median = (values: number[]) => {
    const sorted = [...values].sort((x, y) => x - y);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  };
  const ratioTo = (round: Result[], r: Result, part: string) => r.rps / (round.find((b) => b.name.includes(part))?.rps ?? Number.NaN);
  console.log(`\n${SECONDS}s per target, ${CONNECTIONS} connections, ${ADS} ads, median of ${ROUNDS} round(s); node ${process.version}, ${(await import('node:os')).cpus().length} CPUs`);
  console.log('target                             req/s     p50 ms  p99 ms  ratio  to page (min-max)  API CPU µs/req  (of it GC)  DB CPU µs/req  errors  non-2xx');
  targets.forEach(([name], index) => {
    const runs = rounds.map((round) => round[index]!);
    const toPage = rounds.map((round) => ratioTo(round, round[index]!, 'ads page'));
    const range = `${Math.min(...toPage).toFixed(2)}-${Math.max(...toPage).toFixed(2)}`;
    console.log(
      `${name.padEnd(34)} ${median(runs.map((r) => r.rps)).toFixed(0).padStart(7)}  ${String(median(runs.map((r) => r.p50))).padStart(7)} ${String(median(runs.map((r) => r.p99))).padStart(7)}`
      + `  ${median(rounds.map((round) => ratioTo(round, round[index]!, 'constant JSON'))).toFixed(2).padStart(5)}  ${median(toPage).toFixed(2).padStart(7)} (${range})`
      + `  ${median(runs.map((r) => r.cpuMicrosPerRequest)).toFixed(0).padStart(14)}  ${median(runs.map((r) => r.gcMicrosPerRequest)).toFixed(0).padStart(10)}  ${median(runs.map((r) => r.dbCpuMicrosPerRequest)).toFixed(0).padStart(13)}`
      + `  ${String(runs.reduce((sum, r) => sum + r.errors, 0)).padStart(6)}  ${String(runs.reduce((sum, r) => sum + r.non2xx, 0)).padStart(7)}`,
    );
  });
  console.log('\nplan of the ads list query (route filter):');
  for (const row of plan.rows) console.log(`  ${row['QUERY PLAN']}`);
}

main().then(() => process.exit(0), (error) => {
  console.error(error);
  process.exit(1);
});
