/**
 * `npm run chaos`: concurrent whole trades while the pieces fail, then the books.
 *
 * The service as deployed over an embedded PostgreSQL and the two-chain devnet: on Temporal
 * (CHAOS_ORCHESTRATOR=temporal, the default) two `npm run api`, one `npm run worker` and two
 * `npm run prover` over a `temporal server start-dev` kept in a file; on the embedded runner
 * (CHAOS_ORCHESTRATOR=embedded) two `npm run api`. CHAOS_TRADES trades (default 100) run on
 * CHAOS_LANES lanes (default 10, each a fresh funded wallet), every call retried while the answer is
 * 503 or no answer. Meanwhile, in turn, every CHAOS_GAP_SECONDS (default 15): SIGKILL an API process,
 * the worker (embedded: the other API process), a prover; restart PostgreSQL; restart the Temporal
 * server; cut the order chain's RPC (a TCP relay in front of anvil) for CHAOS_RPC_OUTAGE_SECONDS
 * (default 30). Each killed process is started again. Afterwards it checks, and exits 1 unless all hold:
 * every trade ended (SETTLED, or EXPIRED) as its chain state says; no trade open and no start
 * pending; the ad's books equal the AdManager's state; every chain event recorded once; the only
 * 5xx answers were 503. Prints the report: what was killed when, what every trade did, the books.
 *
 * CHAOS_VANISH=1 (the keeper's keys in the worker on Temporal, in the api processes on the embedded runner) adds absent parties: each
 * trade, by a seeded random choice (CHAOS_SEED, default 1), is one of five plans: nobody absent; the
 * Maker never locks; the Maker locks, then is gone (the Bridger takes the ad side itself); the Bridger
 * never unlocks (the Maker sends the ad side); both gone after the lock. The keeper is on
 * (KEEPER_UNLOCK_AFTER_SECONDS = VANISH_GRACE_SECONDS, a short lock window). The trades are driven
 * as far as their parties go while the faults above run; then, while the remaining faults go on, the
 * chains' clocks are moved in steps, the keeper acting after each (past the grace on the ad chain,
 * then on the order chain, past every lockExpiry, past every refundTime), and it checks further: each trade ended as its plan says the contracts put the funds
 * (SETTLED with both sides Unlocked, or EXPIRED with the deposit Refunded and no lock); every recipient's
 * balance moved by exactly what its trades owe it; every keeper send final (confirmed, cancelled,
 * expired) and reported; the keeper sent exactly the sides the absent parties left. The report adds
 * each trade's plan and transactions by sender.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { Web3 } from 'web3';
// @ts-expect-error plain ESM script without types
import { installTemporal } from '../scripts/install-temporal.mjs';
import { uuidToBytes32 } from '../chains/address.ts';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../db/embedded.ts';
import { createKnex, migrateToLatest } from '../db/knex.ts';
import { anvilAccounts, startDevnet } from '../devnet/index.ts';
import { freeLoopbackPort } from '../entrypoints/free-port.ts';
import { importRegistry } from '../registry/import.ts';
import { devnetClient, signOrderHash } from '../test/support/devnet-client.ts';
import { startTcpProxy, type TcpProxy } from '../test/support/tcp-proxy.ts';
import { startServiceProcess, startTemporalDevServer, stopped, type DevServer, type ServiceProcess } from '../test/support/temporal-stack.ts';

const TRADES = Number(process.env.CHAOS_TRADES ?? 100);
const LANES = Number(process.env.CHAOS_LANES ?? 10);
const GAP_SECONDS = Number(process.env.CHAOS_GAP_SECONDS ?? 15);
const OUTAGE_SECONDS = Number(process.env.CHAOS_RPC_OUTAGE_SECONDS ?? 30);
const ORCHESTRATOR = process.env.CHAOS_ORCHESTRATOR ?? 'temporal';
const RESERVATION_TTL_SECONDS = 120;
const AD_CHAIN = '31338';
const ORDER_CHAIN = '31337';
const AMOUNT = 100n;
const VANISH = process.env.CHAOS_VANISH === '1';
const SEED = Number(process.env.CHAOS_SEED ?? 1);
/** KEEPER_UNLOCK_AFTER_SECONDS in the vanish run: the clocks are moved past it, never waited for. */
const VANISH_GRACE_SECONDS = 900;
/** The vanish run's lock window (lockExpiry less the contracts' hour): wide enough for a Maker who locks under the faults, short enough to wait for the never-locked trades to expire. */
const VANISH_LOCK_WINDOW_SECONDS = 360;

const web3 = new Web3();
const [funder, makerAccount] = anvilAccounts(2);
const makerKey = makerAccount!.privateKey;
const maker = web3.eth.accounts.privateKeyToAccount(makerKey);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const t0 = Date.now();
const at = () => ((Date.now() - t0) / 1000).toFixed(1);

const timeline: string[] = [];
const note = (what: string) => { timeline.push(`${at()} s: ${what}`); console.log(`[chaos ${at()} s] ${what}`); };
/** Every 5xx answer: status, call, when. */
const serverErrors: Array<{ status: number; call: string; at: string }> = [];
let unanswered = 0;

class HttpError extends Error {
  constructor(readonly status: number, readonly body: unknown, call: string) {
    super(`${call}: ${status} ${JSON.stringify(body)}`);
  }
}

if (ORCHESTRATOR !== 'temporal' && ORCHESTRATOR !== 'embedded') throw new Error('CHAOS_ORCHESTRATOR is temporal or embedded');
const dataDir = mkdtempSync(path.join(tmpdir(), `chaos-${ORCHESTRATOR}-`));
chmodSync(dataDir, 0o755);
const pgPort = 40000 + Math.floor(Math.random() * 9000);
const startDatabase = () => startEmbeddedDatabase({ dataDir: path.join(dataDir, 'pg'), port: pgPort, persistent: true });
let database: EmbeddedDatabase = await startDatabase();
const relayerKey = Wallet.createRandom().privateKey;
const devnet = await startDevnet({ ports: [0, 0], relayerEvmAddress: new Wallet(relayerKey).address, domain: { name: 'ProofBridge', version: '1' } });
const orderRpc = new URL(devnet.rpcUrls[ORDER_CHAIN]!);
const rpcLink: TcpProxy = await startTcpProxy({ host: orderRpc.hostname, port: Number(orderRpc.port) });
const knex = createKnex(database.url, 2);
await migrateToLatest(knex);
// The service reaches the order chain through the relay this run cuts; the wallets go direct.
await importRegistry(knex, {
  ...devnet.registry,
  chains: devnet.registry.chains.map((c) => (String(c.chainId) === ORDER_CHAIN ? { ...c, rpcUrl: `http://127.0.0.1:${rpcLink.port}` } : c)),
});

let temporal: DevServer | undefined;
let temporalLink: TcpProxy | undefined;
const temporalCli = ORCHESTRATOR === 'temporal' ? (installTemporal().cli as string) : '';
if (ORCHESTRATOR === 'temporal') {
  temporal = await startTemporalDevServer(temporalCli, { dbFile: path.join(dataDir, 'temporal.db') });
  const [host, port] = temporal.address.split(':') as [string, string];
  temporalLink = await startTcpProxy({ host, port: Number(port) });
}

const env: Record<string, string> = {
  NODE_ENV: 'test', DATABASE_URL: database.url, DATA_DIR: dataDir, RATE_LIMIT_MAX: '1000000', AUTH_RATE_LIMIT_MAX: '1000000',
  RELAYER_EVM_PRIVATE_KEY: relayerKey, RELAYER_STELLAR_SECRET: Keypair.random().secret(), PROVER_POOL_SIZE: '1',
  // Given, as a deployment gives them: two api processes starting at once over one DATA_DIR would each generate
  // their own into it, and a token one signed would be refused by the other (401 UNAUTHENTICATED).
  JWT_SECRET: randomBytes(48).toString('base64'), SEP10_SIGNING_SECRET: Keypair.random().secret(),
  TRADE_RESERVATION_TTL_SECONDS: String(RESERVATION_TTL_SECONDS), TRADE_START_RECONCILE_SECONDS: '2',
  MAX_OPEN_RESERVATIONS_PER_AD: String(TRADES + LANES), MAX_OPEN_RESERVATIONS_PER_WALLET: '100',
  ...(temporalLink ? { TEMPORAL_ADDRESS: temporalLink.address } : {}),
  ...(VANISH ? {
    KEEPER_ENABLED: 'true', KEEPER_POLL_SECONDS: '1', KEEPER_UNLOCK_AFTER_SECONDS: String(VANISH_GRACE_SECONDS),
    ORDER_LOCK_EXPIRY_SECONDS: String(3600 + VANISH_LOCK_WINDOW_SECONDS),
  } : {}),
};
/** The keeper's accounts, held by the processes that send (the worker on Temporal, the api processes on the embedded runner), given gas on both chains below. */
const keeperKey = Wallet.createRandom().privateKey;
const keeperEnv: Record<string, string> = VANISH ? { KEEPER_EVM_PRIVATE_KEY: keeperKey, KEEPER_STELLAR_SECRET: Keypair.random().secret() } : {};
type Kind = 'api' | 'worker' | 'prover';
interface Slot { kind: Kind; port?: number; proc?: ServiceProcess; killing?: boolean }
const slots: Slot[] = [
  { kind: 'api', port: await freeLoopbackPort() },
  { kind: 'api', port: await freeLoopbackPort() },
  ...(ORCHESTRATOR === 'temporal' ? [{ kind: 'worker' as const }, { kind: 'prover' as const }, { kind: 'prover' as const }] : []),
];
/** Processes that ended without being killed here (a crash), and the error lines of every process that ran. */
const crashes: string[] = [];
const errorLines: string[] = [];
let finishing = false;
const startSlot = async (slot: Slot) => {
  const proc = await startServiceProcess(slot.kind, { ...env, ...(slot.kind === (ORCHESTRATOR === 'temporal' ? 'worker' : 'api') ? keeperEnv : {}), ...(slot.port ? { PORT: String(slot.port) } : {}) });
  slot.proc = proc;
  proc.child.once('exit', (code, signal) => {
    errorLines.push(...proc.errors().map((line) => `${slot.kind} pid ${proc.child.pid}: ${line}`));
    if (slot.killing || finishing) return;
    // Nothing here killed it: a crash. Started again, as a supervisor would, and reported.
    crashes.push(`${slot.kind} (pid ${proc.child.pid}) exited by itself at ${at()} s (${signal ?? `code ${code}`})`);
    note(`${slot.kind} pid ${proc.child.pid} exited by itself (${signal ?? `code ${code}`}); starting it again`);
    startSlot(slot).then(() => note(`${slot.kind} started again (pid ${slot.proc!.child.pid})`), (error) => crashes.push(`${slot.kind} could not start again: ${error}`));
  });
};
await Promise.all(slots.map(startSlot));
const apis = slots.filter((s) => s.kind === 'api');

/** One call, retried on no answer, 503 and "not yet" (409 with Retry-After) until it answers otherwise. */
async function call(lane: number, method: string, route: string, body?: unknown, token?: string): Promise<any> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const what = `${method} ${route.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, ':id')}`;
  const deadline = Date.now() + 10 * 60_000;
  for (let attempt = 0; ; attempt++) {
    if (Date.now() > deadline) throw new Error(`${what}: no answer for 10 minutes`);
    const api = apis[(lane + attempt) % apis.length]!;
    let res: Response;
    try {
      res = await fetch(`http://127.0.0.1:${api.port}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(120_000) });
    } catch {
      unanswered++;
      await sleep(300);
      continue;
    }
    const json = await res.json().catch(() => ({}));
    if (res.status >= 500) {
      serverErrors.push({ status: res.status, call: what, at: at() });
      await sleep(500);
      continue;
    }
    if (res.status === 409 && res.headers.get('retry-after')) {
      await sleep(300);
      continue;
    }
    if (res.status !== 200) throw new HttpError(res.status, json, what);
    return json;
  }
}

const chain = await devnetClient(devnet.rpcUrls, devnet.deployments);
// The keeper's gas (1,000 ETH) on both chains, before any trade owes it anything.
if (VANISH) for (const id of [AD_CHAIN, ORDER_CHAIN]) await chain.provider(id).send('anvil_setBalance', [new Wallet(keeperKey).address, '0x3635C9ADC5DEA00000']);
const login = async (key: string) => {
  const account = web3.eth.accounts.privateKeyToAccount(key);
  const challenge = await call(0, 'POST', '/v1/auth/challenge', { address: account.address, chainKind: 'EVM' });
  return (await call(0, 'POST', '/v1/auth/login', { chainKind: 'EVM', message: challenge.message, signature: account.sign(challenge.message).signature })).tokens.access as string;
};
const makerToken = await login(makerKey);
const routes = await call(0, 'GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=TUSD`);
const routeId = routes.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;
const fund = BigInt(TRADES) * AMOUNT * 2n;
const ad = await call(0, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: fund.toString() }, makerToken);
await chain.approve(AD_CHAIN, makerKey, 'adManager', fund);
await call(0, 'POST', `/v1/ads/${ad.adId}/confirm`, { txHash: await chain.send(AD_CHAIN, 'adManager', makerKey, 'createAd', ad) }, makerToken);
const adId: string = ad.adId;

const orderProvider = chain.provider(ORDER_CHAIN);
const token = chain.contract(ORDER_CHAIN, 'testErc20', funder!.privateKey);
const lanes: Array<{ key: string; address: string; token: string }> = [];
for (let i = 0; i < LANES; i++) {
  const wallet = Wallet.createRandom();
  await orderProvider.send('anvil_setBalance', [wallet.address, '0x56BC75E2D63100000']);
  // A Bridger who takes the ad side itself pays its gas there.
  if (VANISH) await chain.provider(AD_CHAIN).send('anvil_setBalance', [wallet.address, '0x56BC75E2D63100000']);
  await (await token.getFunction('mint')(wallet.address, AMOUNT * BigInt(TRADES))).wait();
  await chain.approve(ORDER_CHAIN, wallet.privateKey, 'orderPortal', AMOUNT * BigInt(TRADES));
  lanes.push({ key: wallet.privateKey, address: wallet.address, token: await login(wallet.privateKey) });
}

let makerQueue: Promise<unknown> = Promise.resolve();
const asMaker = <T>(work: () => Promise<T>): Promise<T> => {
  const run = makerQueue.then(work);
  makerQueue = run.catch(() => undefined);
  return run;
};

/** What each lane saw of each trade it created (a create retried after no answer may leave one behind, which must expire). */
const outcomes = new Map<string, string>();

/** Where the parties of a vanish-run trade stop acting. */
type Plan = 'nobody absent' | 'Maker never locks' | 'Maker gone after its lock' | 'Bridger never unlocks' | 'both gone after the lock';
const PLANS: readonly Plan[] = ['nobody absent', 'Maker never locks', 'Maker gone after its lock', 'Bridger never unlocks', 'both gone after the lock'];
/** The steps the keeper must send for a plan (what the absent parties leave undone), as the trade's transactions name them. */
const KEEPER_STEPS: Record<Plan, readonly string[]> = {
  'nobody absent': [],
  'Maker never locks': ['refund'],
  'Maker gone after its lock': ['orderUnlock'],
  'Bridger never unlocks': ['orderUnlock'],
  'both gone after the lock': ['adUnlock', 'orderUnlock'],
};
/** mulberry32: the plans are the same for the same CHAOS_SEED, whatever lane takes which trade. */
const seeded = (seed: number) => () => {
  seed = (seed + 0x6D2B79F5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const random = seeded(SEED);
/** The plan of the n-th trade (1-based); every trade is 'nobody absent' without CHAOS_VANISH. */
const plans: Plan[] = Array.from({ length: TRADES }, () => (VANISH ? PLANS[Math.floor(random() * PLANS.length)]! : 'nobody absent'));
/** Each created trade's plan and lane. */
const planOf = new Map<string, Plan>();
const laneOf = new Map<string, number>();

/** Each recipient's token balance: the Maker's on the order chain (its unlocks pay it there), each lane's on both chains. */
const balances = async () => ({
  maker: await chain.balanceOf(ORDER_CHAIN, maker.address),
  lanes: await Promise.all(lanes.map(async (l) => ({ ad: await chain.balanceOf(AD_CHAIN, l.address), order: await chain.balanceOf(ORDER_CHAIN, l.address) }))),
});
const balancesBefore = await balances();

let next = 0;
let done = false;
note(`${TRADES} trades on ${LANES} lanes, orchestrator ${ORCHESTRATOR}, ${slots.map((s) => s.kind).join(', ')}; ${cpus().length} CPUs, load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
if (VANISH) note(`vanish plans (seed ${SEED}): ${PLANS.map((p) => `${p} ${plans.filter((q) => q === p).length}`).join(', ')}`);
const trading = Promise.all(lanes.map(async (bridger, lane) => {
  while (next < TRADES) {
    const plan = plans[next]!;
    next++;
    let tradeId = '';
    try {
      const created = await call(lane, 'POST', '/v1/trades/create', { adId, routeId, amount: AMOUNT.toString(), bridgerDstAddress: bridger.address }, bridger.token);
      tradeId = created.tradeId;
      planOf.set(tradeId, plan);
      laneOf.set(tradeId, lane);
      const order = created.reqContractDetails;
      const depositTx = await chain.send(ORDER_CHAIN, 'orderPortal', bridger.key, 'createOrder', order, { orderParams: order.orderParams });
      await call(lane, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridger.token);
      if (plan === 'Maker never locks') {
        outcomes.set(tradeId, 'deposited; the Maker never locked');
        continue;
      }
      const lock = await call(lane, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
      const lockTx = await asMaker(() => chain.send(AD_CHAIN, 'adManager', makerKey, 'lockForOrder', lock, { orderParams: lock.orderParams }));
      await call(lane, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken);
      if (plan === 'both gone after the lock') {
        outcomes.set(tradeId, 'locked; then both parties gone');
        continue;
      }
      if (plan === 'Maker gone after its lock') {
        // The Bridger takes the ad side itself (paid on the ad chain) and leaves; nobody pays the Maker but the keeper.
        const adSide = await call(lane, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridger.key, order.orderHash), side: 'ad' }, bridger.token);
        const adSideTx = await chain.send(AD_CHAIN, 'adManager', bridger.key, 'unlock', adSide, adSide);
        await call(lane, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adSideTx }, bridger.token);
        outcomes.set(tradeId, 'locked; the Maker gone; the Bridger took the ad side');
        continue;
      }
      const makerUnlock = await call(lane, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(makerKey, order.orderHash) }, makerToken);
      const adUnlockTx = await asMaker(() => chain.send(AD_CHAIN, 'adManager', makerKey, 'unlock', makerUnlock, makerUnlock));
      await call(lane, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlockTx }, makerToken);
      if (plan === 'Bridger never unlocks') {
        outcomes.set(tradeId, 'the Maker sent the ad side; the Bridger gone');
        continue;
      }
      const bridgerUnlock = await call(lane, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(bridger.key, order.orderHash) }, bridger.token);
      const orderUnlockTx = await chain.send(ORDER_CHAIN, 'orderPortal', bridger.key, 'unlock', bridgerUnlock, bridgerUnlock);
      await call(lane, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: orderUnlockTx }, bridger.token);
      outcomes.set(tradeId, 'settled by its lane');
    } catch (error) {
      outcomes.set(tradeId || `create-${next}`, `lane stopped: ${error instanceof Error ? error.message.slice(0, 200) : String(error)}`);
    }
  }
})).finally(() => {
  done = true;
  note('the last lane finished its last trade');
});

async function kill(slot: Slot, label: string) {
  note(`SIGKILL ${label} (pid ${slot.proc!.child.pid})`);
  slot.killing = true;
  await stopped(slot.proc!.child, 'SIGKILL');
  await sleep(2_000);
  slot.killing = false;
  await startSlot(slot);
  note(`${label} started again (pid ${slot.proc!.child.pid})`);
}
const faults: Array<() => Promise<void>> = [
  () => kill(apis[0]!, 'api 1'),
  ORCHESTRATOR === 'temporal' ? () => kill(slots.find((s) => s.kind === 'worker')!, 'the worker') : () => kill(apis[1]!, 'api 2 (embedded orchestrator)'),
  ...(ORCHESTRATOR === 'temporal' ? [() => kill(slots.find((s) => s.kind === 'prover')!, 'prover 1')] : []),
  async () => {
    note('PostgreSQL stopping');
    await database.stop();
    await sleep(3_000);
    database = await startDatabase();
    note('PostgreSQL started again');
  },
  ...(ORCHESTRATOR === 'temporal' ? [async () => {
    note('Temporal server SIGKILL');
    temporalLink!.cut();
    await stopped(temporal!.process, 'SIGKILL');
    temporal = await startTemporalDevServer(temporalCli, { dbFile: path.join(dataDir, 'temporal.db') });
    const [host, port] = temporal.address.split(':') as [string, string];
    temporalLink!.retarget({ host, port: Number(port) });
    temporalLink!.restore();
    note('Temporal server started again on its file');
  }] : []),
  async () => {
    note(`order chain RPC cut for ${OUTAGE_SECONDS} s`);
    rpcLink.cut();
    await sleep(OUTAGE_SECONDS * 1000);
    rpcLink.restore();
    note('order chain RPC back');
  },
];
/** Set once the vanish run's keeper phases are over (they run while the faults go on). */
let keeperDone = !VANISH;
const faulting = (async () => {
  for (const fault of faults) {
    await sleep(GAP_SECONDS * 1000);
    // A fault after the trades ended tests less: the report says so (raise CHAOS_TRADES or lower CHAOS_GAP_SECONDS).
    if (done && keeperDone) note('(the trades are over: the next fault meets no trade in flight)');
    else if (done) note('(the lanes are over: the next fault meets the keeper finishing their trades)');
    await fault();
  }
})();
await trading;

/** Problems found while the clocks move (a step that never came): reported with the checks. */
const phaseProblems: string[] = [];
if (VANISH) {
  // The database may be restarting under a fault: the run's own reads are retried for a minute.
  const retried = async <T>(work: () => Promise<T>): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        if (attempt >= 60) throw error;
        await sleep(1_000);
      }
    }
  };
  const count = async (query: any) => Number((await query.count({ n: '*' }))[0]!.n);
  /** Waits (polling each second, up to `seconds`) until `left` says nothing is left; a give-up says what was left. */
  const waitUntil = async (what: string, left: () => Promise<string | undefined>, seconds = 300) => {
    const by = Date.now() + seconds * 1000;
    let remaining: string | undefined;
    while ((remaining = await left().catch((error) => `(cannot tell: ${error})`)) !== undefined) {
      if (Date.now() > by) {
        phaseProblems.push(`gave up after ${seconds} s waiting for ${what}: ${remaining}`);
        note(`gave up waiting for ${what}: ${remaining}`);
        return;
      }
      await sleep(1_000);
    }
    note(what);
  };
  const moveClock = async (chainId: string, seconds: number, why: string) => {
    const provider = chain.provider(chainId);
    await provider.send('evm_increaseTime', [seconds]);
    // Blocks after the jump, so the chain's final time (the newest block at its confirmations) moves too.
    for (let i = 0; i < 4; i += 1) await provider.send('evm_mine', []);
    note(`chain ${chainId}'s clock moved ${seconds} s (${why})`);
  };
  const chainNow = async (chainId: string) => (await chain.provider(chainId).getBlock('latest'))!.timestamp;
  const latest = async (field: 'lockExpiry' | 'refundTime') =>
    Number((await retried(() => knex('trades').max({ t: knex.raw(`(order_params->>'${field}')::bigint`) })))[0]!.t ?? 0);
  const unsettledSends = (action: string, side: string) => knex('keeper_sends').where({ action, side })
    .where((q: any) => q.whereIn('status', ['owed', 'queued', 'sent']).orWhere((r: any) => r.whereIn('status', ['confirmed', 'reverted']).whereNull('reported_at')));
  const describe = (parts: Array<[string, number]>) => {
    const open = parts.filter(([, n]) => n > 0);
    return open.length === 0 ? undefined : open.map(([label, n]) => `${n} ${label}`).join(', ');
  };

  await waitUntil('every lock proven and every owed unlock seen due', async () => describe([
    ['LOCKED trades without their proof', await count(knex('trades').where({ status: 'LOCKED' }).whereNot({ proof_state: 'ready' }))],
    ['owed unlocks not yet seen due', await count(knex('keeper_sends').where({ action: 'unlock', status: 'owed' }).whereNull('due_chain_time'))],
  ]));
  await moveClock(AD_CHAIN, VANISH_GRACE_SECONDS + 5, 'past the grace of the owed ad sides');
  await waitUntil('the keeper\'s ad sides final and reported, the order sides they owe seen due', async () => describe([
    ['ad-side unlocks not final or not reported', await count(unsettledSends('unlock', 'ad'))],
    ['LOCKED trades whose Bridger is unpaid', await count(knex('trades').where({ status: 'LOCKED', bridger_claimed: false }))],
    ['owed unlocks not yet seen due', await count(knex('keeper_sends').where({ action: 'unlock', status: 'owed' }).whereNull('due_chain_time'))],
  ]));
  await moveClock(ORDER_CHAIN, VANISH_GRACE_SECONDS + 5, 'past the grace of the owed order sides');
  await waitUntil('the keeper\'s order sides final and reported, no trade LOCKED', async () => describe([
    ['order-side unlocks not final or not reported', await count(unsettledSends('unlock', 'order'))],
    ['LOCKED trades', await count(knex('trades').where({ status: 'LOCKED' }))],
  ]));
  await moveClock(AD_CHAIN, Math.max(1, await latest('lockExpiry') - await chainNow(AD_CHAIN) + 1), 'past every lockExpiry');
  await waitUntil('every lock release final and reported, no trade DEPOSITED', async () => describe([
    ['lock releases not final or not reported', await count(unsettledSends('releaseLock', 'ad'))],
    ['DEPOSITED trades (their lock window not closed yet)', await count(knex('trades').where({ status: 'DEPOSITED' }))],
  ]), VANISH_LOCK_WINDOW_SECONDS + 120);
  await moveClock(ORDER_CHAIN, Math.max(1, await latest('refundTime') - await chainNow(ORDER_CHAIN) + 1), 'past every refundTime');
  await waitUntil('every keeper send final and reported', async () => describe([
    ['keeper sends not final or not reported', await count(knex('keeper_sends')
      .where((q: any) => q.whereIn('status', ['owed', 'queued', 'sent']).orWhere((r: any) => r.whereIn('status', ['confirmed', 'reverted']).whereNull('reported_at'))))],
  ]));
}
keeperDone = true;
await faulting;

// Quiescence: nothing open, nothing to start (orphaned reservations expire within their TTL).
const open = async () => Number((await knex('trades').whereIn('status', ['PENDING', 'DEPOSITED', 'LOCKED']).count({ n: '*' }))[0]!.n)
  + Number((await knex('trade_starts').count({ n: '*' }))[0]!.n);
const quietBy = Date.now() + (RESERVATION_TTL_SECONDS + 180) * 1000;
while ((await open().catch(() => 1)) > 0 && Date.now() < quietBy) await sleep(1_000);
note('settled down');

// The checks.
const problems: string[] = [...phaseProblems];
const trades: Array<{ id: string; status: string; order_hash: string; bridger_claimed: boolean; ad_creator_claimed: boolean }> =
  await knex('trades').select('id', 'status', 'order_hash', 'bridger_claimed', 'ad_creator_claimed').orderBy('created_at');
const portal = chain.contract(ORDER_CHAIN, 'orderPortal', funder!.privateKey);
const adManager = chain.contract(AD_CHAIN, 'adManager', funder!.privateKey);
const PORTAL = ['None', 'Deposited', 'Unlocked', 'Refunded'];
const MANAGER = ['None', 'Locked', 'Unlocked', 'Released'];
/** Chain events a trade's on-chain states leave (one per step: the deposit, then its unlock or refund; the lock, then its unlock or release). */
const EVENTS_OF: Record<string, number> = { None: 0, Deposited: 1, Locked: 1, Unlocked: 2, Refunded: 2, Released: 2 };
const rows: string[] = [];
/** Per trade: who sent its transactions (the trade's own `transactions[].sentBy`). */
const sentByCounts = new Map<string, number>();
let expectedEvents = 0;
for (const t of trades) {
  const deposit = PORTAL[Number(await portal.getFunction('orders')(t.order_hash))]!;
  const lock = MANAGER[Number(await adManager.getFunction('orders')(t.order_hash))]!;
  const plan = planOf.get(t.id);
  let agrees: boolean;
  let keeperSent = '';
  if (VANISH && plan) {
    // Where the contracts' rules put the funds when the parties stop as planned and the keeper does the rest.
    agrees = plan === 'Maker never locks' ? t.status === 'EXPIRED' && deposit === 'Refunded' && lock === 'None'
      : t.status === 'SETTLED' && deposit === 'Unlocked' && lock === 'Unlocked';
    const transactions: Array<{ step: string; sentBy?: string }> = (await call(0, 'GET', `/v1/trades/${t.id}`)).transactions;
    for (const x of transactions) sentByCounts.set(x.sentBy ?? '(none)', (sentByCounts.get(x.sentBy ?? '(none)') ?? 0) + 1);
    const byKeeper = transactions.filter((x) => x.sentBy === 'relayer').map((x) => x.step).sort();
    keeperSent = `${byKeeper.join(', ') || '-'} (${transactions.length} transactions)`;
    const owed = [...KEEPER_STEPS[plan]].sort();
    if (byKeeper.join() !== owed.join()) problems.push(`trade ${t.id} (${plan}): the keeper sent [${byKeeper.join(', ')}], the absent parties left [${owed.join(', ')}]`);
    const steps = transactions.map((x) => x.step);
    if (new Set(steps).size !== steps.length) problems.push(`trade ${t.id} (${plan}) lists a step twice: ${steps.join(', ')}`);
  } else {
    agrees = t.status === 'SETTLED' ? deposit === 'Unlocked' && lock === 'Unlocked'
      : t.status === 'EXPIRED' ? lock === 'None' && (deposit === 'None' || deposit === 'Deposited')
        : false;
  }
  expectedEvents += EVENTS_OF[deposit]! + EVENTS_OF[lock]!;
  if (!agrees) problems.push(`trade ${t.id}${plan && VANISH ? ` (${plan})` : ''} is ${t.status} but the portal says ${deposit} and the AdManager ${lock}`);
  rows.push(`| ${t.id.slice(0, 8)} | ${t.status} | ${deposit} | ${lock} | ${outcomes.get(t.id) ?? 'a create retried after no answer left it'} |${VANISH ? ` ${keeperSent} |` : ''}`);
}
const adRow = await knex('ads').where({ id: adId }).first();
const onChain = await adManager.getFunction('ads')(uuidToBytes32(adId));
const books = `database: pool ${adRow.pool_amount}, available ${adRow.available_amount}, reserved ${adRow.reserved_amount}, locked ${adRow.locked_amount}; AdManager: available ${onChain.available}, locked ${onChain.locked}`;
const settled = trades.filter((t) => t.status === 'SETTLED').length;
if (BigInt(onChain.locked) !== 0n) problems.push(`the AdManager still holds ${onChain.locked} locked`);
if (BigInt(onChain.available) !== fund - BigInt(settled) * AMOUNT) problems.push(`AdManager available ${onChain.available} != funded ${fund} - ${settled} settled x ${AMOUNT}`);
for (const column of ['available_amount', 'locked_amount', 'reserved_amount'] as const) {
  const expected = column === 'available_amount' ? BigInt(onChain.available) : 0n;
  if (BigInt(adRow[column]) !== expected) problems.push(`ad ${column} ${adRow[column]} != ${expected} (the AdManager's state)`);
}
// Each chain event of a trade once per chain (both contracts emit OrderUnlocked, one on each chain).
const duplicates: Array<{ subject_id: string; chain_id: string; event: string; n: string }> = await knex('chain_events')
  .select('subject_id', 'chain_id', 'event').count({ n: '*' }).groupBy('subject_id', 'chain_id', 'event').having(knex.raw('count(*) > 1')) as any;
for (const d of duplicates) problems.push(`chain event ${d.event} of ${d.subject_id} on chain ${d.chain_id} recorded ${d.n} times`);
const events = Number((await knex('chain_events').where({ subject_kind: 'trade' }).count({ n: '*' }))[0]!.n);
const expiredCount = trades.filter((t) => t.status === 'EXPIRED').length;
if (VANISH) {
  // Every step the chains show recorded once: the keeper's included, a refund too.
  if (events !== expectedEvents) problems.push(`${events} trade chain events recorded; the chains show ${expectedEvents} steps`);
} else if (events - settled * 4 < 0 || events - settled * 4 > expiredCount) {
  // A settled trade has exactly its deposit, lock and two unlocks recorded; an expired one at most its deposit.
  problems.push(`${events} trade chain events recorded for ${settled} settled and ${expiredCount} expired trades`);
}
let keeperReport = '';
if (VANISH) {
  // No party paid twice, nobody short: each recipient's balance moved by exactly what its trades owe it.
  const after = await balances();
  const paying = (lane?: number) => [...planOf].filter(([id, plan]) => plan !== 'Maker never locks' && (lane === undefined || laneOf.get(id) === lane)).length;
  const makerDelta = after.maker - balancesBefore.maker;
  if (makerDelta !== BigInt(paying()) * AMOUNT) problems.push(`the Maker's recipient received ${makerDelta} on the order chain; its ${paying()} settling trades owe it ${BigInt(paying()) * AMOUNT}`);
  lanes.forEach((_, lane) => {
    const owed = BigInt(paying(lane)) * AMOUNT;
    const adDelta = after.lanes[lane]!.ad - balancesBefore.lanes[lane]!.ad;
    const orderDelta = after.lanes[lane]!.order - balancesBefore.lanes[lane]!.order;
    if (adDelta !== owed) problems.push(`lane ${lane}'s Bridger received ${adDelta} on the ad chain; its settling trades owe it ${owed}`);
    // Every deposit that did not settle came back by its refund.
    if (orderDelta !== -owed) problems.push(`lane ${lane}'s Bridger's order-chain balance moved ${orderDelta}; its settled deposits are ${-owed}`);
  });
  // Every keeper send final, and each final send handed to its trade.
  const sends: Array<{ trade_id: string; action: string; side: string; status: string; last_error: string | null; reported_at: Date | null }> =
    await knex('keeper_sends').select('trade_id', 'action', 'side', 'status', 'last_error', 'reported_at');
  const byStatus = new Map<string, number>();
  for (const send of sends) {
    byStatus.set(send.status, (byStatus.get(send.status) ?? 0) + 1);
    if (!['confirmed', 'cancelled', 'expired'].includes(send.status)) problems.push(`keeper send ${send.action} ${send.side} of ${send.trade_id} ended ${send.status}: ${send.last_error ?? '(no reason recorded)'}`);
    if (send.status === 'confirmed' && send.reported_at === null) problems.push(`keeper send ${send.action} ${send.side} of ${send.trade_id} confirmed but never handed to its trade`);
  }
  const attempts = Number((await knex('keeper_attempts').count({ n: '*' }))[0]!.n);
  const planned = [...planOf.values()].reduce((n, plan) => n + KEEPER_STEPS[plan].length, 0);
  keeperReport = `\nKeeper: ${sends.length} sends owed at some point (${[...byStatus].map(([k, v]) => `${v} ${k}`).join(', ')}); ${attempts} signed transactions for ${byStatus.get('confirmed') ?? 0} confirmed (${planned} planned by the absent parties).`
    + `\nTransactions by sender: ${[...sentByCounts].map(([k, v]) => `${k} ${v}`).join(', ')}.`
    + `\nPlans: ${PLANS.map((p) => `${p} ${[...planOf.values()].filter((q) => q === p).length}`).join(', ')} (seed ${SEED}).`
    + `\nBalances moved: the Maker ${after.maker - balancesBefore.maker} on the order chain; lanes on the ad chain ${after.lanes.map((l, i) => l.ad - balancesBefore.lanes[i]!.ad).join(' ')}.`;
}
if ((await open()) > 0) problems.push(`${await open()} trades open or starts pending after ${RESERVATION_TTL_SECONDS + 180} s`);
const not503 = serverErrors.filter((e) => e.status !== 503);
for (const e of not503) problems.push(`${e.status} on ${e.call} at ${e.at} s`);
const lanesStopped = [...outcomes.values()].filter((o) => o.startsWith('lane stopped'));
for (const o of lanesStopped) problems.push(o);
for (const c of crashes) problems.push(c);
finishing = true;
for (const slot of slots) if (slot.proc) errorLines.push(...slot.proc.errors().map((line) => `${slot.kind} pid ${slot.proc!.child.pid}: ${line}`));

console.log(`\n## Chaos: ${ORCHESTRATOR}, ${TRADES} trades on ${LANES} lanes${VANISH ? ', parties vanishing' : ''}\n`);
console.log(timeline.map((l) => `- ${l}`).join('\n'));
console.log(`\nTrades: ${trades.length} created (${trades.length - TRADES} by creates retried after no answer), ${settled} SETTLED, ${trades.filter((t) => t.status === 'EXPIRED').length} EXPIRED, ${trades.filter((t) => !['SETTLED', 'EXPIRED'].includes(t.status)).length} other.`);
console.log(`Answers: ${serverErrors.length} 5xx (${serverErrors.filter((e) => e.status === 503).length} of them 503), ${unanswered} calls without an answer (a process down), all retried.`);
console.log(`Books: ${books}${keeperReport}`);
console.log(`\n| trade | status | OrderPortal | AdManager | lane |${VANISH ? ' sent by the keeper |' : ''}\n|---|---|---|---|---|${VANISH ? '---|' : ''}\n${rows.join('\n')}`);
if (errorLines.length > 0) console.log(`\nError lines the processes logged (${errorLines.length}; 5xx causes among them):\n${errorLines.join('\n')}`);
console.log(problems.length === 0 ? '\nAll checks hold.' : `\nPROBLEMS (${problems.length}):\n${problems.map((p) => `- ${p}`).join('\n')}`);

chain.close();
for (const slot of slots) if (slot.proc) await stopped(slot.proc.child, 'SIGTERM');
await knex.destroy();
await rpcLink.close();
await temporalLink?.close();
if (temporal) await stopped(temporal.process, 'SIGTERM');
await devnet.stop();
await database.stop();
rmSync(dataDir, { recursive: true, force: true });
process.exit(problems.length === 0 ? 0 : 1);
