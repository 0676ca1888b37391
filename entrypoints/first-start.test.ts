import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Address, rpc } from '@stellar/stellar-sdk';
import { JsonRpcProvider, parseEther } from 'ethers';
import { afterAll, describe, expect, it } from 'vitest';
import { anvilAccounts } from '../devnet/accounts.ts';
import { readContract } from '../devnet/stellar/client.ts';
import { STELLAR_DEVNET_PASSPHRASE } from '../devnet/stellar/node.ts';
import { STELLAR_DEV_ACCOUNT } from './dev-accounts.ts';

/**
 * `npm start`'s entry point as a newcomer runs it on a fresh clone: its own OS process, no
 * configuration but free ports, a data directory that does not exist yet. The shared `target/`
 * holds the native prover the test setup built (cargo is present), so the start must prove
 * natively; the first start's build itself is prover/native/binary.test.ts's.
 */

const root = new URL('..', import.meta.url).pathname;
const dataParent = mkdtempSync(path.join(tmpdir(), 'relayer-first-start-'));
// PostgreSQL runs as the postgres user when we are root: it must be able to enter the directory.
chmodSync(dataParent, 0o755);
const dataDir = path.join(dataParent, 'data');
/** Every start, so a failed assertion or a timeout leaves no service (and its PostgreSQL and chains) running. */
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) {
    const code = interrupt(child);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await code;
    clearTimeout(timer);
  }
  rmSync(dataParent, { recursive: true, force: true });
}, 30_000);

interface Started {
  child: ChildProcess;
  /** Everything it printed on stdout until it was ready. */
  output: string;
  seconds: number;
}

/** Starts `node --import tsx entrypoints/main.ts` and resolves once `ready` (and, when pretty, the summary) is printed. */
function startMain(env: Record<string, string>, ready: RegExp): Promise<Started> {
  const started = performance.now();
  const inherited = { ...process.env };
  // A fresh clone's start: nothing configured but what the test must (free ports, its own data directory).
  for (const key of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'LOG_FORMAT', 'PROVER_BACKEND', 'METRICS_PORT']) delete inherited[key];
  const child = spawn(process.execPath, ['--import', 'tsx', 'entrypoints/main.ts'], {
    cwd: root,
    env: {
      ...inherited, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info',
      DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', STELLAR_DEVNET_PORT: '0', EMBEDDED_PG_PORT: String(30000 + Math.floor(Math.random() * 9000)),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) resolve({ child, output, seconds: Math.round((performance.now() - started) / 100) / 10 });
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code} before it was ready:\n${output}`)));
  });
}

/** Ctrl-C, as a person stops it; resolves with the exit code. */
function interrupt(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGINT');
  });
}

describe('the first npm start on a fresh clone', () => {
  it('proves natively, prints a summary a person can act on, leads / to the docs; a later start is JSON off a terminal', async () => {
    // LOG_FORMAT=pretty: what a terminal shows (auto picks it there; colours only on a real terminal).
    const first = await startMain({ LOG_FORMAT: 'pretty' }, /\n {2}Stop {7}Ctrl-C\n/);
    let stellarRpc: string;
    try {
      const out = first.output;
      expect(out).toMatch(/INFO.*: prover backend: native \(PROVER_BACKEND=auto and the native prover is built/);
      // Readable lines, not JSON objects.
      expect(out).not.toMatch(/^\{"level"/m);
      const url = /\n {2}API {8}(http:\/\/127\.0\.0\.1:\d+) /.exec(out)![1]!;
      expect(out).toContain(`Docs       ${url}/docs`);
      expect(out).toContain(`Data       ${dataDir}`);
      expect(out).toContain(`Reset      stop (Ctrl-C), delete ${dataDir}, start again`);
      // Each chain: its RPC URL and network, a dev account, and how to get more; the accounts hold what it says.
      const evmDev = anvilAccounts(2)[1]!;
      for (const chainId of ['31337', '31338']) {
        const rpcUrl = new RegExp(`\\n {4}${chainId} +Devnet [AB]: RPC (http://127\\.0\\.0\\.1:\\d+), EVM chain id ${chainId}\\n {11}dev account ${evmDev.address} `).exec(out)![1]!;
        const provider = new JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true });
        expect(await provider.getBalance(evmDev.address)).toBeGreaterThanOrEqual(parseEther('9000'));
        provider.destroy();
      }
      stellarRpc = new RegExp(`\\n {4}148 +Stellar Devnet: RPC (http://127\\.0\\.0\\.1:\\d+), Stellar network passphrase "${STELLAR_DEVNET_PASSPHRASE}"\\n {11}dev account ${STELLAR_DEV_ACCOUNT.publicKey()} `).exec(out)![1]!;
      expect(out).toContain(`more: the friendbot gives any new account 10 000 XLM: curl '${stellarRpc}/friendbot?addr=`);
      const server = new rpc.Server(stellarRpc, { allowHttp: true });
      const routes = await (await fetch(`${url}/v1/routes?orderChainId=148`)).json();
      const tusd = routes.data.map((r: { orderToken: { symbol: string; address: string } }) => r.orderToken).find((t: { symbol: string }) => t.symbol === 'TUSD').address;
      expect(await readContract(server, STELLAR_DEVNET_PASSPHRASE, STELLAR_DEV_ACCOUNT.publicKey(), tusd, 'balance', [new Address(STELLAR_DEV_ACCOUNT.publicKey()).toScVal()])).toBe(1_000_000n * 10n ** 7n);

      // `/` leads to the page at /app: a redirect, and following it the page (or, not built, its 503 saying how).
      const home = await fetch(`${url}/`, { redirect: 'manual' });
      expect(home.status).toBe(302);
      expect(home.headers.get('location')).toBe('/app/');
      const followed = await fetch(`${url}/`);
      expect(followed.url).toBe(`${url}/app/`);
      expect([200, 503]).toContain(followed.status);
    } finally {
      expect(await interrupt(first.child)).toBe(0);
    }

    // A later start over the same data, stdout not a terminal (LOG_FORMAT=auto): one JSON object per line.
    const later = await startMain({}, /"msg":"ready: http[^\n]*\n/);
    try {
      const lines = later.output.trim().split('\n').map((line) => JSON.parse(line) as { msg: string; summary?: { chains: { chainId: string; rpcUrl: string }[] } });
      expect(lines.find((line) => line.msg.startsWith('prover backend:'))!.msg).toMatch(/^prover backend: native/);
      expect(lines.some((line) => /^building/.test(line.msg))).toBe(false);
      const ready = lines.find((line) => line.msg.startsWith('ready: '))!;
      expect(ready.summary!.chains.map((chain) => chain.chainId).sort()).toEqual(['148', '31337', '31338']);
    } finally {
      expect(await interrupt(later.child)).toBe(0);
    }
    console.log(`npm start, fresh data directory (native prover and Stellar network already built): ready in ${first.seconds} s; later start: ${later.seconds} s`);
  }, 240_000);
});
