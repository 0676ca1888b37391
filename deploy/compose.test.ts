import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKnex } from '../db/knex.ts';
import { startDevnet, type Devnet } from '../devnet/index.ts';
import { freeLoopbackPort } from '../entrypoints/free-port.ts';
import { importRegistry } from '../registry/import.ts';
import { ROOT } from '../test/support/deploy-tools.ts';
import { AD_CHAIN, devnetClient, eventually, ORDER_CHAIN, signOrderHash, tradeParties, type DevnetClient } from '../test/support/devnet-client.ts';
import { startTcpProxy, type TcpProxy } from '../test/support/tcp-proxy.ts';
import { loginEvm, type JsonResponse } from '../test/support/wallets.ts';
import { DEVELOPMENT_VK_SHA256 } from '../test/support/proving-key.ts';

/**
 * deploy/compose.yaml brought up with podman-compose (pinned, scripts/install-podman-compose.mjs)
 * over deploy/compose.standins.yaml: the relayer image built from deploy/Dockerfile
 * (scripts/build-image.mjs, the same tag and layer cache as image.test.ts), locally made stand-ins
 * for PostgreSQL (Debian's 15) and Temporal (the CLI's dev server) that no registry serves here.
 * podman-compose 1.6 on podman 4.3 does not wait for `service_healthy`, so the services come up
 * in compose's order one step at a time (`up -d --no-deps`), each step waiting for the healthchecks
 * compose.yaml declares (`podman healthcheck run`) or for `migrate` to exit 0. Then one trade goes
 * through the api container against the two-chain devnet on the host, up to the Maker's unlock:
 * its proof, made by the prover container, is verified by the AdManager on chain. And a prover
 * stopped (SIGTERM) while it holds a proof job finishes the job and exits 0.
 * temporal-ui, Prometheus and Grafana are not started (no image and no stand-in here).
 */

const run = promisify(execFile);
const IMAGE = 'localhost/relayer:test';
/** A cold build (stand-in bases, crates, npm packages) takes about 15 minutes on a busy 2-core machine. */
const BUILD_TIMEOUT_MS = 45 * 60_000;
const STEP_TIMEOUT_MS = 5 * 60_000;

const { makerKey, bridgerKey, maker, bridger } = tradeParties();
const relayerKey = Wallet.createRandom().privateKey;
const project = `relayer-test-${randomBytes(4).toString('hex')}`;

let env: NodeJS.ProcessEnv;
let scratch: string;
let envFile: string;
let podmanCompose: string;
let devnet: Devnet;
let chain: DevnetClient;
const proxies: TcpProxy[] = [];
let apiUrl: string;
/** Seconds from `up` to healthy (or exited 0), per service. */
const upSeconds: Record<string, number> = {};

async function podman(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run('podman', args, { env, maxBuffer: 64 * 1024 * 1024 });
}

async function compose(args: string[]): Promise<string> {
  const { stdout, stderr } = await run(podmanCompose, ['-p', project, '-f', 'compose.yaml', '-f', 'compose.standins.yaml', '--env-file', envFile, ...args],
    { cwd: path.join(ROOT, 'deploy'), env, maxBuffer: 64 * 1024 * 1024 });
  return `${stdout}${stderr}`;
}

/** The container compose made for `service`. */
async function container(service: string): Promise<string> {
  const { stdout } = await podman(['ps', '--all', '--filter', `label=com.docker.compose.project=${project}`, '--filter', `label=com.docker.compose.service=${service}`, '--format', '{{.Names}}']);
  const name = stdout.trim().split('\n')[0];
  if (!name) throw new Error(`no container for service ${service} in project ${project}`);
  return name;
}

async function logs(name: string): Promise<string> {
  const { stdout, stderr } = await podman(['logs', name]).catch((error) => ({ stdout: String(error), stderr: '' }));
  return `${stdout}${stderr}`.slice(-6000);
}

/** Runs the service's compose healthcheck until it passes; throws with its log if the container stops or time runs out. */
async function healthy(service: string, since: number): Promise<void> {
  const name = await container(service);
  while (Date.now() - since < STEP_TIMEOUT_MS) {
    const { stdout } = await podman(['inspect', '--format', '{{.State.Running}}', name]);
    if (stdout.trim() !== 'true') throw new Error(`${service} stopped before it was healthy:\n${await logs(name)}`);
    const check = await podman(['healthcheck', 'run', name]).then(() => true, () => false);
    if (check) {
      upSeconds[service] = (Date.now() - since) / 1000;
      return;
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
  throw new Error(`${service} was not healthy within ${STEP_TIMEOUT_MS / 1000} s:\n${await logs(name)}`);
}

/** `up -d --no-deps` the services, then waits for every one's healthcheck. */
async function upHealthy(...services: string[]): Promise<void> {
  const since = Date.now();
  await compose(['up', '-d', '--no-deps', ...services]);
  await Promise.all(services.map((service) => healthy(service, since)));
}

async function request(method: string, route: string, body?: unknown, token?: string): Promise<JsonResponse> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${apiUrl}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** A process container's Prometheus text from its METRICS_PORT (never published: read from inside). */
async function metricsOf(service: string): Promise<string> {
  const { stdout } = await podman(['exec', await container(service), 'node', '-e',
    "fetch('http://127.0.0.1:9464/metrics').then((r) => r.text()).then((t) => process.stdout.write(t))"]);
  return stdout;
}

/** The messages of a container's JSON log lines, in order. */
const messages = (log: string) => log.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l).msg as string);

interface Deposited { tradeId: string; order: any; makerToken: string }
let ad: { adId: string; routeId: string; makerToken: string; bridgerToken: string } | undefined;

/** An ad of the Maker's, funded and confirmed (made once, then reused). */
async function openAd(): Promise<NonNullable<typeof ad>> {
  if (ad) return ad;
  const asClient = { request: (p: string, init?: RequestInit) => fetch(`${apiUrl}${p}`, init) } as never;
  const makerToken = (await loginEvm(asClient, maker)).body.tokens.access;
  const bridgerToken = (await loginEvm(asClient, bridger)).body.tokens.access;
  const routes = await request('GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=TUSD`);
  const routeId = routes.body.data.find((r: any) => r.adToken.symbol === 'TUSD' && r.orderToken.symbol === 'TUSD').id;
  const created = await request('POST', '/v1/ads/create', { routeId, creatorDstAddress: maker.address, fundAmount: '1000' }, makerToken);
  expect(created.status).toBe(200);
  await chain.approve(AD_CHAIN, makerKey!.privateKey, 'adManager', 1000n);
  const adTx = await chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'createAd', created.body);
  expect((await request('POST', `/v1/ads/${created.body.adId}/confirm`, { txHash: adTx }, makerToken)).status).toBe(200);
  return (ad = { adId: created.body.adId, routeId, makerToken, bridgerToken });
}

/** A trade of 100 on the ad, its deposit made and confirmed: its proof job starts. */
async function deposited(): Promise<Deposited> {
  const { adId, routeId, makerToken, bridgerToken } = await openAd();
  await chain.approve(ORDER_CHAIN, bridgerKey!.privateKey, 'orderPortal', 100n);
  const created = await request('POST', '/v1/trades/create', { adId, routeId, amount: '100', bridgerDstAddress: bridger.address }, bridgerToken);
  expect(created.status, `${JSON.stringify(created.body)}\n${await logs(await container('api'))}`).toBe(200);
  const { tradeId, reqContractDetails: order } = created.body;
  const depositTx = await chain.send(ORDER_CHAIN, 'orderPortal', bridgerKey!.privateKey, 'createOrder', order, { orderParams: order.orderParams });
  expect((await request('POST', `/v1/trades/${tradeId}/confirm`, { txHash: depositTx }, bridgerToken)).status).toBe(200);
  return { tradeId, order, makerToken };
}

/** The Maker locks, then unlocks with the trade's proof once it is ready; the AdManager verifies it on chain. */
async function unlockedByMaker({ tradeId, order, makerToken }: Deposited): Promise<void> {
  const lock = await request('POST', `/v1/trades/${tradeId}/lock`, undefined, makerToken);
  expect(lock.status).toBe(200);
  const lockTx = await chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'lockForOrder', lock.body, { orderParams: lock.body.orderParams });
  expect((await request('POST', `/v1/trades/${tradeId}/confirm`, { txHash: lockTx }, makerToken)).status).toBe(200);
  const unlock = await eventually('the proof', () => request('POST', `/v1/trades/${tradeId}/unlock`, { signature: signOrderHash(makerKey!.privateKey, order.orderHash) }, makerToken), (r) => r.status !== 409, 120_000);
  expect(unlock.status).toBe(200);
  const unlockTx = await chain.send(AD_CHAIN, 'adManager', makerKey!.privateKey, 'unlock', unlock.body, unlock.body);
  expect((await request('POST', `/v1/trades/${tradeId}/unlock/confirm`, { txHash: unlockTx }, makerToken)).status).toBe(200);
}

beforeAll(async () => {
  const started = Date.now();
  env = { ...process.env, CONTAINERS_CONF: path.join(ROOT, '.tools', 'podman', 'containers.conf') };
  scratch = mkdtempSync(path.join(tmpdir(), 'relayer-compose-'));
  const script = (name: string, ...args: string[]) => run(process.execPath, [path.join(ROOT, 'scripts', name), ...args], { maxBuffer: 64 * 1024 * 1024, timeout: BUILD_TIMEOUT_MS });
  const build = script('build-image.mjs', IMAGE);
  const lastLine = (out: { stdout: string }) => out.stdout.trim().split('\n').pop()!;
  podmanCompose = lastLine(await script('install-podman-compose.mjs'));
  const standins = JSON.parse(lastLine(await script('image-standins.mjs', 'compose'))) as Record<string, string>;

  // One file, as deploy/README.md has it: compose's own variables and the processes' settings.
  envFile = path.join(scratch, 'relayer.env');
  const settings: Record<string, string> = {
    RELAYER_IMAGE: IMAGE, RELAYER_ENV_FILE: envFile, API_PORT: String(await freeLoopbackPort()), ...standins,
    POSTGRES_USER: 'relayer', POSTGRES_DB: 'relayer', POSTGRES_PASSWORD: randomBytes(16).toString('hex'), GRAFANA_ADMIN_PASSWORD: randomBytes(16).toString('hex'),
    LOG_LEVEL: 'info', SIWE_DOMAIN: 'relayer.example.org', SIWE_URI: 'https://relayer.example.org', SEP10_HOME_DOMAIN: 'relayer.example.org', SEP10_WEB_AUTH_DOMAIN: 'relayer.example.org',
    JWT_SECRET: randomBytes(48).toString('base64'), RELAYER_EVM_PRIVATE_KEY: relayerKey, KEEPER_ENABLED: 'false',
    RELAYER_STELLAR_SECRET: Keypair.random().secret(), SEP10_SIGNING_SECRET: Keypair.random().secret(), PROVER_POOL_SIZE: '1',
    // The committed development proving key in a production-mode test stack (README, "Proving key").
    PROVING_KEY_ALLOW_DEVELOPMENT: 'true', PROVING_KEY_VK_SHA256: DEVELOPMENT_VK_SHA256,
    // Raw relayer keys from the env file, as the image test runs them (docs/security.md "Relayer keys in an HSM").
    RELAYER_SIGNER_ALLOW_ENV: 'true',
  };
  writeFileSync(envFile, Object.entries(settings).map(([k, v]) => `${k}=${v}`).join('\n'), { mode: 0o600 });
  apiUrl = `http://127.0.0.1:${settings.API_PORT}`;

  // Compose's order: PostgreSQL (Temporal's stand-in keeps its data in memory and needs none).
  await upHealthy('postgres', 'temporal');
  const devnetStarted = startDevnet({ ports: [0, 0], relayerEvmAddress: new Wallet(relayerKey).address, domain: { name: 'ProofBridge', version: '1' } });
  const built = JSON.parse(lastLine(await build)) as { seconds: number; sizeBytes: number };
  console.info(`image ${IMAGE}: built in ${built.seconds.toFixed(0)} s`);
  let since = Date.now();
  await compose(['up', '-d', '--no-deps', 'migrate']);
  const migrate = await container('migrate');
  const { stdout: code } = await podman(['wait', migrate]);
  if (code.trim() !== '0') throw new Error(`migrate exited ${code.trim()}:\n${await logs(migrate)}`);
  upSeconds.migrate = (Date.now() - since) / 1000;

  // The devnet's chains on the host, reached from the containers through the project network's
  // gateway (a relay there to each anvil's loopback port); the registry names those addresses.
  devnet = await devnetStarted;
  const { stdout: network } = await podman(['network', 'inspect', `${project}_default`]);
  const gateway = JSON.parse(network)[0].subnets[0].gateway as string;
  const registry = structuredClone(devnet.registry);
  for (const entry of registry.chains) {
    const target = new URL(devnet.rpcUrls[entry.chainId]!);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) }, 0, gateway);
    proxies.push(proxy);
    entry.rpcUrl = `http://${proxy.address}`;
  }
  const { stdout: published } = await podman(['port', await container('postgres'), '5432/tcp']);
  const knex = createKnex(`postgres://relayer:${settings.POSTGRES_PASSWORD}@${published.trim().split('\n')[0]}/relayer`, 1);
  await importRegistry(knex, registry);
  await knex.destroy();
  chain = await devnetClient(devnet.rpcUrls, devnet.deployments);

  since = Date.now();
  await upHealthy('api', 'worker', 'prover');
  console.info(`compose stack up in ${((Date.now() - started) / 1000).toFixed(0)} s (with the image build); per step: ${JSON.stringify(upSeconds)} s`);
}, BUILD_TIMEOUT_MS + 4 * STEP_TIMEOUT_MS);

afterAll(async () => {
  if (podmanCompose && envFile) await compose(['down', '--volumes', '--timeout', '10']).catch((error) => console.error(`compose down: ${error}`));
  for (const proxy of proxies) await proxy.close();
  chain?.close();
  await devnet?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}, 120_000);

describe('the compose stack (deploy/compose.yaml with podman-compose, stand-ins for PostgreSQL and Temporal)', () => {
  it('every service it starts is healthy, and migrate exited 0', async () => {
    expect(Object.keys(upSeconds).sort()).toEqual(['api', 'migrate', 'postgres', 'prover', 'temporal', 'worker']);
    expect((await fetch(`${apiUrl}/health`)).status).toBe(200);
  });

  it('serves a trade\'s proof from the prover container: the Maker\'s unlock carries it and the AdManager accepts it on chain', async () => {
    await unlockedByMaker(await deposited());
    // The prover container made it: only provers serve the `proofs` task queue.
    expect(await metricsOf('prover')).toMatch(/^relayer_prover_proofs_total\{[^}]*result="ok"[^}]*\} 1$/m);
    expect(await metricsOf('worker')).not.toMatch(/^relayer_prover_proofs_total\{/m);
  }, STEP_TIMEOUT_MS);

  it('a prover holding a proof job when SIGTERM arrives finishes it, then exits 0', async () => {
    const prover = await container('prover');
    const { stdout: ip } = await podman(['inspect', '--format', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', prover]);
    // The prover's requests to the chains wait at the relay: its proof job stops where it reads the
    // order chain (the tree's sync), so it is surely in flight when the signal comes.
    const holding = Promise.race(proxies.map((proxy) => proxy.hold(ip.trim())));
    const trade = await deposited();
    await holding;
    const stopping = podman(['stop', '--time', '60', prover]);
    await eventually('the prover shutting down', async () => messages(await logs(prover)), (said) => said.includes('shutting down'), 60_000);
    for (const proxy of proxies) proxy.release();
    await stopping;
    const { stdout: code } = await podman(['inspect', '--format', '{{.State.ExitCode}}', prover]);
    const log = await logs(prover);
    expect(code.trim(), log).toBe('0');
    const said = messages(log);
    expect(said.indexOf('stopped'), log).toBeGreaterThan(said.indexOf('shutting down'));
    // No prover runs now: the proof the Maker's unlock carries is the one the stopping prover finished.
    await unlockedByMaker(trade);
  }, STEP_TIMEOUT_MS);
});
