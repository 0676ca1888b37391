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
 */
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
  TRADE_RESERVATION_TTL_SECONDS: String(RESERVATION_TTL_SECONDS), TRADE_START_RECONCILE_SECONDS: '2',
  MAX_OPEN_RESERVATIONS_PER_AD: String(TRADES + LANES), MAX_OPEN_RESERVATIONS_PER_WALLET: '100',
  ...(temporalLink ? { TEMPORAL_ADDRESS: temporalLink.address } : {}),
};
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
  const proc = await startServiceProcess(slot.kind, { ...env, ...(slot.port ? { PORT: String(slot.port) } : {}) });
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
let next = 0;
let done = false;
note(`${TRADES} trades on ${LANES} lanes, orchestrator ${ORCHESTRATOR}, ${slots.map((s) => s.kind).join(', ')}; ${cpus().length} CPUs, load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
const trading = Promise.all(lanes.map(async (bridger, lane) => {
  while (next < TRADES) {
    next++;
    let tradeId = '';
    try {
      const created = await call(lane, 'POST', '/v1/trades/create', { adId, routeId, amount: AMOUNT.toString(), bridgerDstAddress: bridger.address }, bridger.token);
      tradeId = created.tradeId;
      const order = created.reqContractDetails;
      const depositTx = await chain.send(ORDER_CHAIN, 'orderPortal', bridger.key, 'createOrder', order, { orderParams: order.orderParams });
      await call(lane, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridger.token);
      const lock = await call(lane, 'POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
      const lockTx = await asMaker(() => chain.send(AD_CHAIN, 'adManager', makerKey, 'lockForOrder', lock, { orderParams: lock.orderParams }));
      await call(lane, 'POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken);
      const makerUnlock = await call(lane, 'POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(makerKey, order.orderHash) }, makerToken);
      const adUnlockTx = await asMaker(() => chain.send(AD_CHAIN, 'adManager', makerKey, 'unlock', makerUnlock, makerUnlock));
      await call(lane, 'POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: adUnlockTx }, makerToken);
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
for (const fault of faults) {
  await sleep(GAP_SECONDS * 1000);
  // A fault after the trades ended tests less: the report says so (raise CHAOS_TRADES or lower CHAOS_GAP_SECONDS).
  if (done) note('(the trades are over: the next fault meets no trade in flight)');
  await fault();
}
await trading;

// Quiescence: nothing open, nothing to start (orphaned reservations expire within their TTL).
const open = async () => Number((await knex('trades').whereIn('status', ['PENDING', 'DEPOSITED', 'LOCKED']).count({ n: '*' }))[0]!.n)
  + Number((await knex('trade_starts').count({ n: '*' }))[0]!.n);
const quietBy = Date.now() + (RESERVATION_TTL_SECONDS + 180) * 1000;
while ((await open().catch(() => 1)) > 0 && Date.now() < quietBy) await sleep(1_000);
note('settled down');

// The checks.
const problems: string[] = [];
const trades: Array<{ id: string; status: string; order_hash: string; bridger_claimed: boolean; ad_creator_claimed: boolean }> =
  await knex('trades').select('id', 'status', 'order_hash', 'bridger_claimed', 'ad_creator_claimed').orderBy('created_at');
const portal = chain.contract(ORDER_CHAIN, 'orderPortal', funder!.privateKey);
const adManager = chain.contract(AD_CHAIN, 'adManager', funder!.privateKey);
const PORTAL = ['None', 'Deposited', 'Unlocked', 'Refunded'];
const MANAGER = ['None', 'Locked', 'Unlocked'];
const rows: string[] = [];
for (const t of trades) {
  const deposit = PORTAL[Number(await portal.getFunction('orders')(t.order_hash))];
  const lock = MANAGER[Number(await adManager.getFunction('orders')(t.order_hash))];
  const agrees = t.status === 'SETTLED' ? deposit === 'Unlocked' && lock === 'Unlocked'
    : t.status === 'EXPIRED' ? lock === 'None' && (deposit === 'None' || deposit === 'Deposited')
      : false;
  if (!agrees) problems.push(`trade ${t.id} is ${t.status} but the portal says ${deposit} and the AdManager ${lock}`);
  rows.push(`| ${t.id.slice(0, 8)} | ${t.status} | ${deposit} | ${lock} | ${outcomes.get(t.id) ?? 'a create retried after no answer left it'} |`);
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
// A settled trade has exactly its deposit, lock and two unlocks recorded; an expired one at most its deposit.
const events = Number((await knex('chain_events').where({ subject_kind: 'trade' }).count({ n: '*' }))[0]!.n);
const expiredCount = trades.filter((t) => t.status === 'EXPIRED').length;
if (events - settled * 4 < 0 || events - settled * 4 > expiredCount) problems.push(`${events} trade chain events recorded for ${settled} settled and ${expiredCount} expired trades`);
if ((await open()) > 0) problems.push(`${await open()} trades open or starts pending after ${RESERVATION_TTL_SECONDS + 180} s`);
const not503 = serverErrors.filter((e) => e.status !== 503);
for (const e of not503) problems.push(`${e.status} on ${e.call} at ${e.at} s`);
const lanesStopped = [...outcomes.values()].filter((o) => o.startsWith('lane stopped'));
for (const o of lanesStopped) problems.push(o);
for (const c of crashes) problems.push(c);
finishing = true;
for (const slot of slots) if (slot.proc) errorLines.push(...slot.proc.errors().map((line) => `${slot.kind} pid ${slot.proc!.child.pid}: ${line}`));

console.log(`\n## Chaos: ${ORCHESTRATOR}, ${TRADES} trades on ${LANES} lanes\n`);
console.log(timeline.map((l) => `- ${l}`).join('\n'));
console.log(`\nTrades: ${trades.length} created (${trades.length - TRADES} by creates retried after no answer), ${settled} SETTLED, ${trades.filter((t) => t.status === 'EXPIRED').length} EXPIRED, ${trades.filter((t) => !['SETTLED', 'EXPIRED'].includes(t.status)).length} other.`);
console.log(`Answers: ${serverErrors.length} 5xx (${serverErrors.filter((e) => e.status === 503).length} of them 503), ${unanswered} calls without an answer (a process down), all retried.`);
console.log(`Books: ${books}`);
console.log(`\n| trade | status | OrderPortal | AdManager | lane |\n|---|---|---|---|---|\n${rows.join('\n')}`);
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
