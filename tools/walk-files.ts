/**
 * `npm run walks`: how many of the project's source files four requests enter, measured rather than
 * read. The service runs in this process (embedded orchestrator, its in-process prover pool) over a
 * fresh embedded PostgreSQL and the two-chain anvil devnet it starts itself, as the end-to-end tests'
 * scene does; a Maker funds an ad and a Bridger makes trades against it, one round each: a warm-up
 * round (first imports, first tree sync), then WALK_ROUNDS counted rounds (default 3).
 *
 * V8's precise coverage (node:inspector, `callCount`) counts every function's calls; taking it resets
 * the counts, so a take just before a request and one just after give what ran in between. The prover
 * pool's worker threads are covered too (attached through the inspector's NodeWorker domain). A file
 * is entered when one of its functions ran. The walks, in each round:
 * - create:  POST /v1/trades/create, request to response;
 * - confirm: POST /v1/trades/:id/confirm of the mined deposit, request to response;
 * - proof:   from that response until the trade's proof is stored and the orchestrator's prove job
 *            completed (polled every 20 ms): the PROVE follow-up carried out, the prover, the commit. The job is
 *            sent at the confirmation's commit and would race its response: this process's fetches of the
 *            `trade-prove` queue wait until the confirm's window has closed (a gate around pg-boss's fetch,
 *            the tool's only hook into the service: it changes when the job starts, not what it runs);
 * - list:    GET /v1/ads with no token, after the trade changed the ad (the page is read whole).
 * What is not counted, and printed apart: a file entered in some counted rounds only; a file of which
 * only functions ran that also ran in the idle windows (2 s per round with nothing asked: polls and
 * timers); for the three requests, the files every request made enters (the middleware: the
 * intersection of the three walks' requests and a GET no route serves). Files of tools/ and test/
 * (this client), node_modules and files git does not track are never counted.
 *
 * WALK_ROUNDS=n; WALK_JSON=<file> writes the figures, the lists and each file's functions that ran.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { Session } from 'node:inspector/promises';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.join(import.meta.dirname, '..');
const ROUNDS = Number(process.env.WALK_ROUNDS ?? 3);
/** Each round's window with nothing asked, for what runs in the background. */
const IDLE_MS = 2_000;
/** The repository's own files (git ls-files): what counts; generated files nobody commits do not. */
const TRACKED = new Set(execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }).split('\0'));
const WALKS = ['create', 'confirm', 'proof', 'list'] as const;
type Walk = typeof WALKS[number];

interface FunctionCoverage { functionName: string; ranges: Array<{ startOffset: number; count: number }> }
interface ScriptCoverage { url: string; functions: FunctionCoverage[] }
/** Project file -> the functions of it that ran (name@offset) -> how many calls. */
type Ran = Map<string, Map<string, number>>;

/** The project file a script URL names (relative to the root); undefined for node_modules, Node's own, untracked and this client's files. */
function projectFile(url: string): string | undefined {
  if (!url.startsWith('file://')) return undefined;
  const file = path.relative(ROOT, fileURLToPath(url.split('?')[0]!));
  if (file.startsWith('..') || file.split(path.sep).includes('node_modules')) return undefined;
  if (file.startsWith(`tools${path.sep}`) || file.startsWith(`test${path.sep}`)) return undefined;
  return TRACKED.has(file) ? file : undefined;
}

/** Adds to `ran` the functions of `scripts` whose call count rose since the last take. */
function addRan(ran: Ran, scripts: ScriptCoverage[]): Ran {
  for (const script of scripts) {
    const file = projectFile(script.url);
    if (!file) continue;
    for (const f of script.functions) {
      const range = f.ranges[0];
      if (!range || range.count === 0) continue;
      if (!ran.has(file)) ran.set(file, new Map());
      const calls = ran.get(file)!;
      const key = `${f.functionName}@${range.startOffset}`;
      calls.set(key, (calls.get(key) ?? 0) + range.count);
    }
  }
  return ran;
}

/**
 * Precise coverage of this isolate and of every worker thread (the prover pool's), started at once.
 * `take()` answers the project functions that ran since the previous take, in any of them, by file.
 */
async function startCoverage() {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  // Worker threads: each speaks the protocol through the main session, its messages wrapped.
  let nextId = 1;
  let lost = 0;
  const pending = new Map<number, { resolve: (value: any) => void; reject: (error: Error) => void }>();
  const workers = new Map<string, Promise<unknown>>();
  const toWorker = (sessionId: string, method: string, params: object = {}) => new Promise<any>((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) }).catch(reject);
  });
  session.on('NodeWorker.receivedMessageFromWorker', ({ params }: any) => {
    const message = JSON.parse(params.message);
    const waiting = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    if (message.error) waiting.reject(new Error(`worker ${message.error.message}`));
    else waiting.resolve(message.result);
  });
  session.on('NodeWorker.attachedToWorker', ({ params }: any) => {
    const { sessionId } = params;
    workers.set(sessionId, (async () => {
      await toWorker(sessionId, 'Profiler.enable');
      await toWorker(sessionId, 'Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    })().catch(() => undefined));
  });
  session.on('NodeWorker.detachedFromWorker', ({ params }: any) => { workers.delete(params.sessionId); });
  await session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
  return {
    async take(): Promise<Ran> {
      const ran = addRan(new Map(), (await session.post('Profiler.takePreciseCoverage')).result as ScriptCoverage[]);
      for (const [sessionId, started] of workers) {
        await started;
        const taken = await toWorker(sessionId, 'Profiler.takePreciseCoverage').catch(() => { lost += 1; return { result: [] }; });
        addRan(ran, taken.result);
      }
      return ran;
    },
    workers: () => workers.size,
    /** Takes of a worker thread that failed (its functions are missing from that window). */
    lostTakes: () => lost,
    close: () => session.disconnect(),
  };
}

/**
 * Holds this process's fetches of pg-boss queue `queue` while `hold()` is on, until `release()`: pg-boss's
 * workers fetch through its Manager's `fetch` (node_modules/pg-boss/src/manager.js).
 */
function fetchGate(queue: string) {
  const require = createRequire(import.meta.url);
  const Manager = require(path.join(path.dirname(require.resolve('pg-boss')), 'manager.js'));
  const fetch = Manager.prototype.fetch;
  if (typeof fetch !== 'function') throw new Error('pg-boss has no Manager.prototype.fetch here: the gate cannot hold its jobs');
  let gate: { promise: Promise<void>; open: () => void } | undefined;
  Manager.prototype.fetch = async function gated(this: unknown, name: string, ...rest: unknown[]) {
    while (name === queue && gate) await gate.promise;
    return fetch.call(this, name, ...rest);
  };
  return {
    hold() {
      let open!: () => void;
      const promise = new Promise<void>((resolve) => { open = resolve; });
      gate = { promise, open };
    },
    release() {
      const held = gate;
      gate = undefined;
      held?.open();
    },
  };
}

/** Waits for `ok` (every 20 ms), or throws saying what it waited for. */
async function until(what: string, ok: () => Promise<boolean>, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const intersect = (sets: Set<string>[]) => new Set([...sets[0] ?? []].filter((f) => sets.every((s) => s.has(f))));
const union = (sets: Set<string>[]) => new Set(sets.flatMap((s) => [...s]));
const sorted = (files: Iterable<string>) => [...files].sort();

async function main(): Promise<void> {
  const started = Date.now();
  // Coverage first, the project's modules after (imported below): their functions are counted from their first call.
  const coverage = await startCoverage();
  const proveJobs = fetchGate('trade-prove');
  const { startEmbeddedDatabase } = await import('../db/embedded.ts');
  const { loadConfig } = await import('../config/config.ts');
  const { start } = await import('../entrypoints/service.ts');
  const { pino } = await import('pino');
  const { Web3 } = await import('web3');
  const { AD_CHAIN, ORDER_CHAIN, devnetClient, tradeParties } = await import('../test/support/devnet-client.ts');

  const dataDir = mkdtempSync(path.join(tmpdir(), 'walk-files-'));
  chmodSync(dataDir, 0o755);
  const stops: Array<() => Promise<unknown> | void> = [() => rmSync(dataDir, { recursive: true, force: true })];
  try {
    // A random port, another when it is taken (other checkouts run their PostgreSQL on this machine).
    let database: Awaited<ReturnType<typeof startEmbeddedDatabase>> | undefined;
    for (let attempt = 1; !database; attempt++) {
      try {
        database = await startEmbeddedDatabase({ dataDir: path.join(dataDir, 'pg'), port: 40000 + Math.floor(Math.random() * 20000), persistent: false });
      } catch (error) {
        if (attempt >= 5 || !/could not create any TCP\/IP sockets|Address already in use/i.test(String(error))) throw error;
      }
    }
    stops.unshift(() => database.stop());
    const config = loadConfig({
      NODE_ENV: 'test', PORT: '0', HOST: '127.0.0.1', DATABASE_URL: database.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent',
      RATE_LIMIT_MAX: '100000', AUTH_RATE_LIMIT_MAX: '100000', PROVER_POOL_SIZE: '1',
      DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', STELLAR_DEVNET: 'off',
      // Background work that is no request's: off or rare, so an idle window is quiet.
      BOOKS_AUDIT_CRON: 'off', RETENTION_CRON: 'off', KEEPER_ENABLED: 'false', METRICS_SAMPLE_SECONDS: '3600',
      MAX_OPEN_RESERVATIONS_PER_WALLET: '1000', MAX_OPEN_RESERVATIONS_PER_AD: '1000',
    });
    const service = await start(config, pino({ level: 'silent' }));
    stops.unshift(() => service.stop());
    const devnet = await devnetClient(service.devnet!.rpcUrls, service.devnet!.deployments);
    stops.unshift(() => devnet.close());
    const { makerKey, bridgerKey, maker, bridger } = tradeParties();

    const call = async (method: string, route: string, body?: unknown, token?: string, status = 200) => {
      const headers: Record<string, string> = {};
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (token) headers.authorization = `Bearer ${token}`;
      const res = await fetch(`${service.url}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const json: any = await res.json();
      if (res.status !== status) throw new Error(`${method} ${route}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const web3 = new Web3();
    const login = async (account: typeof maker) => {
      const challenge = await call('POST', '/v1/auth/challenge', { address: account.address, chainKind: 'EVM' });
      const signature = web3.eth.accounts.privateKeyToAccount(account.privateKey).sign(challenge.message).signature;
      return (await call('POST', '/v1/auth/login', { chainKind: 'EVM', message: challenge.message, signature })).tokens.access as string;
    };
    const makerToken = await login(maker);
    const bridgerToken = await login(bridger);
    const routes = await call('GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=TUSD`);
    const routeId: string = routes.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;
    const ad = await call('POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '100000' }, makerToken);
    await devnet.approve(AD_CHAIN, makerKey.privateKey, 'adManager', 100_000n);
    const adTx = await devnet.send(AD_CHAIN, 'adManager', makerKey.privateKey, 'createAd', ad);
    await call('POST', `/v1/ads/${ad.adId}/confirm`, { txHash: adTx }, makerToken);

    /** The files `work` enters, from a take just before it to one just after. */
    const measured = async (work: () => Promise<unknown>) => {
      await coverage.take();
      await work();
      return coverage.take();
    };
    const seen: Record<Walk | 'every request', Ran[]> = { create: [], confirm: [], proof: [], list: [], 'every request': [] };
    /** Functions that ran while nothing was asked (any round, the warm-up too): background work (polls, timers). */
    const idle = new Map<string, Set<string>>();
    // Round 0 warms up (first imports, first tree sync, first proof thread) and is not counted.
    for (let round = 0; round <= ROUNDS; round++) {
      const keep = (into: Ran[]) => (ran: Ran) => { if (round > 0) into.push(ran); };
      await devnet.approve(ORDER_CHAIN, bridgerKey.privateKey, 'orderPortal', 100n);
      let created: any;
      keep(seen.create)(await measured(async () => {
        created = await call('POST', '/v1/trades/create', { adId: ad.adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
      }));
      const { tradeId, reqContractDetails: order } = created;
      const depositTx = await devnet.send(ORDER_CHAIN, 'orderPortal', bridgerKey.privateKey, 'createOrder', order, { orderParams: order.orderParams });
      proveJobs.hold();
      keep(seen.confirm)(await measured(async () => {
        const confirmed = await call('POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken);
        if (confirmed.success !== true || confirmed.duplicate !== false) throw new Error(`confirm ${tradeId}: ${JSON.stringify(confirmed)}`);
      }));
      // The proof window opens where the confirm's closed: its take is the confirm's last (a take of its own here would
      // drop what ran while the confirm's take waited on the worker threads); the prove job may start from here.
      proveJobs.release();
      keep(seen.proof)(await (async () => {
        // Stored, and the orchestrator's prove job done (what it does after the commit is the proof's walk too).
        await until(`trade ${tradeId}'s proof stored and its prove job completed`, async () =>
          (await service.knex('trades').where({ id: tradeId }).first('proof_state'))?.proof_state === 'ready'
          && (await service.knex('pgboss.job').where({ name: 'trade-prove', state: 'completed' })
            .whereRaw("data->>'tradeId' = ?", [tradeId]).first('id')) !== undefined);
        return coverage.take();
      })());
      keep(seen.list)(await measured(async () => {
        const page = await call('GET', '/v1/ads');
        if (!page.data.some((a: any) => a.id === ad.adId)) throw new Error(`GET /v1/ads did not list ad ${ad.adId}`);
      }));
      keep(seen['every request'])(await measured(() => call('GET', '/v1/walk-files-no-such-route', undefined, undefined, 404)));
      const quiet = await measured(() => new Promise((resolve) => setTimeout(resolve, IDLE_MS)));
      for (const [file, functions] of quiet) idle.set(file, new Set([...idle.get(file) ?? [], ...functions.keys()]));
    }

    /** The files of `ran` entered by the walk: one function ran that does not also run while idle. */
    const walked = (ran: Ran) =>
      new Set([...ran].filter(([file, calls]) => [...calls.keys()].some((f) => !idle.get(file)?.has(f))).map(([file]) => file));
    const files = (ran: Ran) => new Set(ran.keys());
    // Entered by every request made: the path no route serves and each request of the three request walks.
    const everyRequest = intersect([...seen['every request'], ...seen.create, ...seen.confirm, ...seen.list].map(files));
    const result = Object.fromEntries(WALKS.map((walk) => {
      // The proof is no request: nothing is taken out of it.
      const own = (f: string) => walk === 'proof' || !everyRequest.has(f);
      const inEvery = sorted([...intersect(seen[walk].map(walked))].filter(own));
      return [walk, {
        count: inEvery.length,
        files: inEvery,
        /** Entered in some rounds only. */
        someRoundsOnly: sorted([...union(seen[walk].map(walked))].filter((f) => own(f) && !inEvery.includes(f))),
        /** Ran in the window, but only functions that also run while idle. */
        backgroundOnly: sorted([...union(seen[walk].map(files))].filter((f) => own(f) && !union(seen[walk].map(walked)).has(f))),
        /** What ran of each counted file in the last round (name@offset; '' is the module's own code): why it is on the walk. */
        functions: Object.fromEntries(inEvery.map((f) => [f, sorted(seen[walk].at(-1)!.get(f)!.keys())])),
      }];
    }));
    const report = {
      rounds: ROUNDS, workerThreads: coverage.workers(), lostTakes: coverage.lostTakes(),
      walks: result, everyRequest: sorted(everyRequest), idle: sorted(idle.keys()), seconds: Math.round((Date.now() - started) / 1000),
    };
    for (const walk of WALKS) {
      const { count, files: entered, someRoundsOnly, backgroundOnly } = result[walk]!;
      console.log(`\n${walk}: ${count} files`);
      for (const file of entered) console.log(`    ${file}`);
      if (someRoundsOnly.length) console.log(`  in some rounds only, not counted: ${someRoundsOnly.join(', ')}`);
      if (backgroundOnly.length) console.log(`  only what also runs while idle, not counted: ${backgroundOnly.join(', ')}`);
    }
    console.log(`\nevery request (taken out of create, confirm and list): ${everyRequest.size} files`);
    for (const file of sorted(everyRequest)) console.log(`    ${file}`);
    console.log(`idle (${IDLE_MS / 1000} s windows): ${sorted(idle.keys()).join(', ') || 'nothing'}`);
    const figures = WALKS.map((w) => `${w} ${result[w]!.count}`).join(', ');
    console.log(`\n${figures} (rounds ${ROUNDS}, worker threads covered ${report.workerThreads}, ${report.seconds} s)`);
    if (report.lostTakes) console.log(`${report.lostTakes} takes of a worker thread failed (a thread that ended?): its functions are missing there`);
    if (process.env.WALK_JSON) writeFileSync(process.env.WALK_JSON, `${JSON.stringify(report, null, 1)}\n`);
  } finally {
    for (const stop of stops) await stop();
    coverage.close();
  }
}

await main();
