/**
 * `npm run bench:push`: how long a committed state change takes to reach a server-sent events
 * client and a webhook receiver, with BENCH_STREAMS (1,000) streams open.
 *
 * An embedded PostgreSQL with the schema and seeded trades; the API as its own process (`npm run
 * api`'s entry point: the LISTEN fan-out and the webhook deliverer run there); this process opens
 * the streams (spread over BENCH_TRADES trades), runs a webhook receiver, and commits BENCH_EVENTS
 * outbox events (one every BENCH_INTERVAL_MS) through `appendPushedEvents`, as the lifecycle does.
 * Each event's delay is taken from just before its COMMIT to its arrival: at every stream of its
 * trade, and at the receiver (one endpoint of a user every event goes to). Baseline, same run: the
 * bare PostgreSQL NOTIFY -> LISTEN delay to a client of this process.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedDatabase } from '../db/embedded.ts';
import { createKnex, migrateToLatest } from '../db/knex.ts';
import { appendPushedEvents } from '../db/repositories/pushed-events.ts';
import { insertWebhookEndpoint } from '../db/repositories/webhooks.ts';
import { importRegistry } from '../registry/import.ts';
import { seedAdsAndTrades } from './seed-ads.ts';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 1000);
const TRADES = Number(process.env.BENCH_TRADES ?? 100);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 300);
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_MS ?? 50);

const now = () => performance.timeOrigin + performance.now();

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
const summary = (values: number[]) =>
  `n=${values.length}  p50 ${percentile(values, 50).toFixed(1)} ms  p95 ${percentile(values, 95).toFixed(1)} ms  max ${Math.max(...values).toFixed(1)} ms`;

async function main() {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-push-'));
  const db = await startEmbeddedDatabase({ dataDir: path.join(dir, 'pg'), port: 41000 + Math.floor(Math.random() * 9000), persistent: false });
  let api: ReturnType<typeof spawn> | undefined;
  try {
    const admin = createKnex(db.url, 1);
    await admin.raw('CREATE DATABASE bench');
    await admin.destroy();
    const url = db.url.replace(/\/postgres$/, '/bench');
    const knex = createKnex(url, 4);
    await migrateToLatest(knex);
    await importRegistry(knex, JSON.parse(readFileSync('devnet/registry.json', 'utf8')));
    await seedAdsAndTrades(knex, TRADES);
    // Seeded rows carry no lifecycle times; the embedded orchestrator re-arms open trades' timers on start.
    await knex('trades').update({ status: 'DEPOSITED', reservation_expires_at: knex.raw("now() + interval '1 day'"), lock_deadline: knex.raw("now() + interval '1 day'") });
    const tradeIds: string[] = (await knex('trades').select('id').orderBy('id').limit(TRADES)).map((r: { id: string }) => r.id);

    // The webhook receiver and the user it serves (every event goes to this user's feed).
    const webhookArrivals = new Map<number, number>();
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => { body += chunk; });
      req.on('end', () => {
        const at = now();
        webhookArrivals.set(JSON.parse(body).data.bench, at);
        res.statusCode = 204;
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const [user] = await knex('users').insert({}).returning('id');
    const botAddress = `0x${'b0'.repeat(20)}`;
    await knex('wallets').insert({ user_id: user.id, chain_kind: 'EVM', address: botAddress });
    await insertWebhookEndpoint(knex, {
      id: crypto.randomUUID(), userId: user.id, url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, description: 'bench', secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
    }, 1);

    // The API process.
    api = spawn(process.execPath, ['--max-semi-space-size=32', '--import', 'tsx', 'entrypoints/api-main.ts'], {
      env: {
        ...process.env, NODE_ENV: 'test', DATABASE_URL: url, DATA_DIR: path.join(dir, 'data'), PORT: '0', HOST: '127.0.0.1', METRICS_PORT: '0',
        LOG_LEVEL: 'info', RATE_LIMIT_MAX: '1000000', SSE_MAX_STREAMS_PER_CLIENT: String(STREAMS + 10), SSE_MAX_STREAMS: String(STREAMS + 10), TEMPORAL_ADDRESS: '', WEBHOOK_SWEEP_SECONDS: '60',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const apiUrl = await new Promise<string>((resolve, reject) => {
      let out = '';
      api!.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const found = /"msg":"ready: (http:\/\/[^ "]+)/.exec(out);
        if (found) resolve(found[1]!);
      });
      api!.once('exit', (code) => reject(new Error(`the API exited ${code}:\n${out}`)));
    });

    // The streams: STREAMS connections over TRADES trades.
    const sseArrivals = new Map<number, number[]>();
    const streams: http.ClientRequest[] = [];
    let opened = 0;
    await Promise.all(Array.from({ length: STREAMS }, (_, i) => new Promise<void>((resolve, reject) => {
      const request = http.get(`${apiUrl}/v1/trades/${tradeIds[i % TRADES]}/events`, { agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream ${i}: ${res.statusCode}`));
        opened++;
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const at = now();
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = /^data: (.*)$/m.exec(frame)?.[1];
            if (!data) continue;
            const bench = JSON.parse(data).data.bench as number;
            (sseArrivals.get(bench) ?? sseArrivals.set(bench, []).get(bench)!).push(at);
          }
        });
        resolve();
      });
      request.on('error', reject);
      streams.push(request);
    })));
    console.log(`${opened} streams open over ${TRADES} trades`);

    // Baseline: the bare NOTIFY -> LISTEN delay.
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    const notifyArrivals = new Map<number, number>();
    listener.on('notification', (message) => notifyArrivals.set(JSON.parse(message.payload!).bench, now()));
    await listener.query('LISTEN bench_baseline');

    const committedAt = new Map<number, number>();
    const baselineAt = new Map<number, number>();
    for (let i = 0; i < EVENTS; i++) {
      const tradeId = tradeIds[i % TRADES]!;
      const trx = await knex.transaction();
      await appendPushedEvents(trx, {
        tradeId, recipients: [botAddress],
        events: [{ type: 'trade.proof_ready', data: { tradeId, adId: tradeId, status: 'DEPOSITED', proofReady: true, bridgerClaimed: false, adCreatorClaimed: false, unlockDue: null, bench: i } as never }],
      });
      committedAt.set(i, now());
      await trx.commit();
      const base = await knex.transaction();
      await base.raw('SELECT pg_notify(?, ?)', ['bench_baseline', JSON.stringify({ bench: i })]);
      baselineAt.set(i, now());
      await base.commit();
      await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS));
    }
    const perTrade = STREAMS / TRADES;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && ([...sseArrivals.values()].reduce((n, a) => n + a.length, 0) < EVENTS * perTrade || webhookArrivals.size < EVENTS || notifyArrivals.size < EVENTS)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const sse = [...sseArrivals].flatMap(([i, arrivals]) => arrivals.map((at) => at - committedAt.get(i)!));
    const webhook = [...webhookArrivals].map(([i, at]) => at - committedAt.get(i)!);
    const baseline = [...notifyArrivals].map(([i, at]) => at - baselineAt.get(i)!);
    console.log(`\n${EVENTS} events committed, one every ${INTERVAL_MS} ms, ${STREAMS} streams open (${perTrade} per trade)`);
    console.log(`commit -> SSE event       ${summary(sse)}  (expected ${EVENTS * perTrade})`);
    console.log(`commit -> webhook         ${summary(webhook)}  (expected ${EVENTS})`);
    console.log(`baseline NOTIFY -> LISTEN ${summary(baseline)}`);
    for (const request of streams) request.destroy();
    await listener.end();
    receiver.closeAllConnections();
    receiver.close();
    await knex.destroy();
  } finally {
    if (api && api.exitCode === null) {
      api.kill('SIGTERM');
      await new Promise((resolve) => api!.once('exit', resolve));
    }
    await db.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
