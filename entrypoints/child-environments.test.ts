import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { artifacts } from '../circuits/artifacts.ts';
import { CHILD_BASE_ENV, RUST_DIAGNOSTICS_ENV } from '../config/child-env.ts';
import { NativeProver } from '../prover/native/client.ts';
import { descendantsOf, type ProcessInfo } from '../test/support/process-tree.ts';
import { DEVELOPMENT_VK_SHA256 } from '../test/support/proving-key.ts';
import { readyUrl } from '../test/support/service-process.ts';
import { createSoftHsmToken } from '../test/support/softhsm.ts';

/**
 * `npm start` in production mode as its own OS process, run with the very command `npm start`
 * runs, every secret set to a fresh random value: no process it spawns holds a secret it does not
 * use in /proc/<pid>/environ (where any process of the same user, or a database superuser reading
 * server files, would find it), and each holds only the settings of its allow-list.
 */

const root = new URL('..', import.meta.url).pathname;
/** The `start` script as npm runs it: a shell command (which execs the Node 24 launcher, then node). */
const startScript = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
const dataParent = mkdtempSync(path.join(tmpdir(), 'relayer-child-env-'));
// PostgreSQL runs as the postgres user when we are root: it must be able to enter the directory.
chmodSync(dataParent, 0o755);
const token = createSoftHsmToken(inject('softhsmModule'));
const PIN = readFileSync(token.env.PKCS11_PIN_FILE!, 'utf8').trim();

const secrets = {
  JWT_SECRET: randomBytes(48).toString('base64url'),
  SEP10_SIGNING_SECRET: Keypair.random().secret(),
  RELAYER_EVM_PRIVATE_KEY: Wallet.createRandom().privateKey,
  RELAYER_STELLAR_SECRET: Keypair.random().secret(),
  PKCS11_PIN: PIN,
};

/** A production-mode embedded start signing in the SoftHSM token, the PIN given in the environment. */
const productionEnv = (dataDir: string): NodeJS.ProcessEnv => {
  const inherited = { ...process.env };
  for (const key of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'LOG_FORMAT', 'METRICS_PORT', 'PKCS11_PIN_FILE']) delete inherited[key];
  const { PKCS11_PIN_FILE: _file, ...tokenEnv } = token.env;
  return {
    ...inherited, ...tokenEnv, ...secrets, NODE_ENV: 'production', KEEPER_ENABLED: 'false', PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_FORMAT: 'json',
    EMBEDDED_PG_PORT: String(30000 + Math.floor(Math.random() * 9000)), DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', STELLAR_DEVNET_PORT: '0',
    PROVER_BACKEND: 'native', PROVER_POOL_SIZE: '1',
    SIWE_DOMAIN: 'relayer.example.org', SIWE_URI: 'https://relayer.example.org', SEP10_HOME_DOMAIN: 'relayer.example.org',
    SEP10_WEB_AUTH_DOMAIN: 'relayer.example.org', CORS_ORIGINS: 'https://relayer.example.org',
    PROVING_KEY_ALLOW_DEVELOPMENT: 'true', PROVING_KEY_VK_SHA256: DEVELOPMENT_VK_SHA256,
  };
};

const started: ChildProcess[] = [];
afterAll(async () => {
  for (const child of started) await stopped(child);
  token.remove();
  rmSync(dataParent, { recursive: true, force: true });
}, 30_000);

function startService(env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn('sh', ['-c', startScript], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  return child;
}

/** Ctrl-C; SIGKILL when it has not exited after 15 s. */
function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGINT');
  });
}

/** What each program `npm start` runs may find in its environment, by the basename of its executable. */
const ALLOWED: Record<string, readonly string[]> = {
  postgres: [...CHILD_BASE_ENV, 'LC_ALL'],
  anvil: [...CHILD_BASE_ENV, 'HOME', ...RUST_DIAGNOSTICS_ENV],
  'relayer-groth16': [...CHILD_BASE_ENV, ...RUST_DIAGNOSTICS_ENV, 'RELAYER_GROTH16_VKEY'],
  'stellar-devnet': [...CHILD_BASE_ENV, ...RUST_DIAGNOSTICS_ENV, 'STELLAR_DEVNET_DEBUG'],
  'relayer-pkcs11-signer': [...CHILD_BASE_ENV, 'HOME', 'SOFTHSM2_CONF', ...RUST_DIAGNOSTICS_ENV, 'PKCS11_MODULE', 'PKCS11_TOKEN_LABEL'],
};

/** The secrets (by name) whose name or value the process's environment shows. */
const secretsIn = (child: ProcessInfo): string[] =>
  Object.entries(secrets).filter(([name, value]) => child.variables.has(name) || child.environ.includes(value) ||
    (name === 'RELAYER_EVM_PRIVATE_KEY' && child.environ.includes(value.slice(2)))).map(([name]) => name);

/** Waits until the service's descendants include every program in `programs`; the list when they do. */
async function whenRunning(pid: number, programs: readonly string[], timeoutMs = 60_000): Promise<ProcessInfo[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = descendantsOf(pid);
    const missing = programs.filter((program) => !found.some((child) => child.program === program));
    if (missing.length === 0) return found;
    if (Date.now() > deadline) throw new Error(`npm start never ran ${missing.join(', ')}; its processes: ${found.map((c) => c.commandLine).join(' | ')}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('what npm start hands its child processes in production mode', () => {
  it('holds no secret in any child environment and gives each child only its allow-list; the PKCS#11 signer gets its PIN on stdin', async () => {
    const service = startService({ ...productionEnv(path.join(dataParent, 'allowed')), ALLOW_EMBEDDED_IN_PRODUCTION: 'true' });
    let output = '';
    for (const stream of [service.stdout!, service.stderr!]) stream.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    try {
      await readyUrl(service).catch((error: Error) => { throw new Error(`${error.message}\n${output.slice(-4000)}`); });
      // The proof pool (and the native prover with it) starts on the first proof: its own test is below.
      const children = await whenRunning(service.pid!, Object.keys(ALLOWED).filter((program) => program !== 'relayer-groth16'));
      const report = children.map((child) => ({
        program: child.program,
        pid: child.pid,
        secrets: secretsIn(child),
        // esbuild (tsx's compiler service) is started by the loader with the process's environment
        // as it is; the preload took the secrets out of it before (entrypoints/hold-secrets.mjs).
        unexpected: child.program === 'esbuild' ? [] : [...child.variables.keys()].filter((name) => !(ALLOWED[child.program] ?? []).includes(name)),
      }));
      expect(report.filter((child) => child.secrets.length > 0 || child.unexpected.length > 0)).toEqual([]);
      // Nothing else runs below it (tsx's esbuild service may or may not still be running).
      expect(children.map((child) => child.program).filter((program) => !(program in ALLOWED) && program !== 'esbuild')).toEqual([]);
      // The signer signed in with the PIN (the devnet's contracts trust the token's key): it came on stdin.
      const signer = children.find((child) => child.program === 'relayer-pkcs11-signer')!;
      expect(signer.commandLine).toMatch(/ serve --pin-stdin$/);
      expect(signer.commandLine).not.toContain(PIN);
    } finally {
      await stopped(service);
    }
  }, 240_000);

  it('starts the native prover with its allow-list only', async () => {
    const prover = await NativeProver.start({ binary: inject('nativeProver'), zkey: artifacts.zkey, verificationKey: artifacts.verificationKey });
    try {
      const mine = descendantsOf(process.pid).filter((child) => child.program === 'relayer-groth16');
      expect(mine.length).toBeGreaterThan(0);
      for (const child of mine) {
        expect([...child.variables.keys()].filter((name) => !ALLOWED['relayer-groth16']!.includes(name))).toEqual([]);
        expect(child.variables.get('RELAYER_GROTH16_VKEY')).toBe(artifacts.verificationKey);
      }
    } finally {
      await prover.close();
    }
  }, 60_000);

  it('refuses the embedded database and devnets in production without ALLOW_EMBEDDED_IN_PRODUCTION: exit 78 naming DATABASE_URL, nothing started', async () => {
    const dataDir = path.join(dataParent, 'refused');
    const service = startService(productionEnv(dataDir));
    let stderr = '';
    service.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const code = await new Promise<number | null>((resolve) => service.once('exit', resolve));
    expect(code).toBe(78);
    expect(stderr).toMatch(/DATABASE_URL is unset: production does not run the embedded PostgreSQL/);
    expect(existsSync(path.join(dataDir, 'pg'))).toBe(false);
  }, 60_000);
});
