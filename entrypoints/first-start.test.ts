import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Address, rpc } from '@stellar/stellar-sdk';
import { JsonRpcProvider, parseEther } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anvilAccounts } from '../devnet/accounts.ts';
import { wasmTargetDirOf } from '../devnet/stellar/build.ts';
import { readContract } from '../devnet/stellar/client.ts';
import { STELLAR_DEVNET_PASSPHRASE } from '../devnet/stellar/node.ts';
// @ts-expect-error a plain .mjs script without types
import { NODE_MIN_MAJOR, NODE_PIN } from '../scripts/install-node.mjs';
import { STELLAR_DEV_ACCOUNT } from './dev-accounts.ts';

/**
 * The README's `npm start` as a newcomer runs it: in a fresh clone of this checkout (its uncommitted
 * changes applied), with the machine's own Node first on PATH (ours: Node 20) and nothing
 * configured but free ports. The clone shares this checkout's node_modules and its built cargo
 * outputs for the Stellar network and this checkout's Soroban wasm, as `npm ci` and the test setup
 * leave them; it installs its Node 24 itself. Its native prover is missing, as on a fresh clone:
 * the start builds it with `npm run build:native` while serving. There the clone's script is a
 * double standing for cargo's cold build (minutes): it waits for the test's word, then puts this
 * checkout's built prover where cargo would. The real cold builds' figures are docs/getting-started.md's.
 */

const root = path.resolve(import.meta.dirname, '..');
const work = mkdtempSync(path.join(tmpdir(), 'relayer-first-start-'));
// PostgreSQL runs as the postgres user when we are root: it must be able to enter the directories.
chmodSync(work, 0o755);
const clone = path.join(work, 'clone');
const dataDir = path.join(clone, '.data');
/** PATH without the pinned Node's folders (what `npm test` and CI put first): the machine's `node` comes first. */
const machinePath = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => !dir.includes(`${path.sep}.tools${path.sep}node${path.sep}`)).join(path.delimiter);
const machineNode = spawnSync('node', ['-p', 'process.versions.node'], { env: { PATH: machinePath }, encoding: 'utf8' }).stdout.trim();
/** The Node the service must run on: the pinned release where the machine's is older, else the machine's. */
const expectedNode = Number(machineNode.split('.')[0]) < NODE_MIN_MAJOR ? `v${NODE_PIN.version}` : `v${machineNode}`;

/** The file whose creation lets the native prover's build (the double) finish. */
const nativeBuildGate = path.join(work, 'native-build-may-finish');

/** Every start, so a failed assertion or a timeout leaves no service (and its PostgreSQL and chains) running. */
const children: ChildProcess[] = [];

beforeAll(() => {
  execFileSync('git', ['clone', '--quiet', root, clone]);
  const changes = execFileSync('git', ['diff', 'HEAD', '--binary'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  if (changes.length > 0) execFileSync('git', ['apply', '--whitespace=nowarn'], { cwd: clone, input: changes });
  // What `npm ci` and the test setup's cargo builds leave, shared rather than made again.
  symlinkSync(realpathSync(path.join(root, 'node_modules')), path.join(clone, 'node_modules'));
  mkdirSync(path.join(clone, 'target', 'wasm'), { recursive: true });
  symlinkSync(realpathSync(path.join(root, 'target', 'devnet')), path.join(clone, 'target', 'devnet'));
  symlinkSync(realpathSync(path.join(root, wasmTargetDirOf(root))), path.join(clone, wasmTargetDirOf(clone)));
  // The native prover's build: the double (see above), writing to its output as cargo does.
  const build = path.join(work, 'build-native.sh');
  writeFileSync(build, [
    `echo '   Compiling relayer-prover-native (a stand-in for cargo in this test)' >&2`,
    `while [ ! -e '${nativeBuildGate}' ]; do sleep 0.2; done`,
    'mkdir -p target/prover',
    `cp '${realpathSync(path.join(root, 'target', 'prover', 'relayer-groth16'))}' target/prover/relayer-groth16.part`,
    'mv target/prover/relayer-groth16.part target/prover/relayer-groth16',
    '',
  ].join('\n'));
  const manifest = JSON.parse(readFileSync(path.join(clone, 'package.json'), 'utf8'));
  manifest.scripts['build:native'] = `sh ${build}`;
  writeFileSync(path.join(clone, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}, 60_000);

afterAll(async () => {
  for (const child of children) {
    const code = interrupt(child);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await code;
    clearTimeout(timer);
  }
  rmSync(work, { recursive: true, force: true });
}, 30_000);

interface Started {
  child: ChildProcess;
  /** Everything it printed on stdout until it was ready. */
  output: string;
  /** Everything it printed on stderr so far (and on: `stderr()` reads it later). */
  stderr: () => string;
  /** Everything printed on stdout so far. */
  stdout: () => string;
  seconds: number;
}

/** Runs `npm start` in the clone and resolves once `ready` (and, when pretty, the summary) is printed. */
function npmStart(env: Record<string, string>, ready: RegExp): Promise<Started> {
  const started = performance.now();
  const inherited = { ...process.env };
  // A fresh clone's start: nothing configured but what the test must (free ports).
  for (const key of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'LOG_FORMAT', 'PROVER_BACKEND', 'METRICS_PORT', 'DATA_DIR', 'NODE_OPTIONS']) delete inherited[key];
  const child = spawn('npm', ['start'], {
    cwd: clone,
    env: {
      ...inherited, PATH: machinePath, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info',
      DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', STELLAR_DEVNET_PORT: '0', EMBEDDED_PG_PORT: String(30000 + Math.floor(Math.random() * 9000)),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    process.stderr.write(chunk);
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) resolve({ child, output, stderr: () => stderr, stdout: () => output, seconds: secondsSince(started) });
    });
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code} before it was ready:\n${output}`)));
  });
}

function secondsSince(started: number): number {
  return Math.round((performance.now() - started) / 100) / 10;
}

/** Ctrl-C, as a person stops it (npm passes it on); resolves with the exit code. */
function interrupt(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGINT');
  });
}

/** The processes under `pid` (children, theirs, ...), from /proc. */
function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      // The command name is in parentheses and may hold spaces: the fields after it are fixed.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of parentOf) if (ppid === parent) (found.push(child), walk(child));
  };
  walk(pid);
  return found;
}

/** The `--version` of each Node.js process under `pid` (its /proc/<pid>/exe). */
function nodeVersionsUnder(pid: number): string[] {
  return descendants(pid)
    .map((child) => { try { return readlinkSync(`/proc/${child}/exe`); } catch { return ''; } })
    .filter((exe) => path.basename(exe) === 'node' && existsSync(exe))
    .map((exe) => execFileSync(exe, ['--version'], { encoding: 'utf8' }).trim());
}

interface Health {
  status: string;
  node?: string;
  devnet?: { ready: boolean; chains: { chainId: string; state: string; detail?: string }[] };
  prover?: { backend: string; state: string; detail?: string };
}

/** Polls until `done()` holds; throws naming what it waited for. */
async function untilTrue(done: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`gave up waiting ${timeoutMs / 1000} s for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Polls /health until `done` holds for it; throws naming what it waited for and what it last said. */
async function untilHealth(url: string, done: (health: Health) => boolean, what: string, timeoutMs: number): Promise<Health> {
  const deadline = performance.now() + timeoutMs;
  let last: Health | undefined;
  while (performance.now() < deadline) {
    last = await (await fetch(`${url}/health`)).json() as Health;
    if (done(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`gave up waiting ${timeoutMs / 1000} s for ${what}; /health said ${JSON.stringify(last)}`);
}

/** Polls /health until the devnet has every chain (the Stellar network joined); throws naming the state it was left in. */
async function untilDevnetReady(url: string, timeoutMs: number): Promise<{ seen: Set<string>; last: Health }> {
  const seen = new Set<string>();
  const deadline = performance.now() + timeoutMs;
  let last: Health | undefined;
  while (performance.now() < deadline) {
    last = await (await fetch(`${url}/health`)).json() as Health;
    const stellar = last.devnet?.chains.find((chain) => chain.chainId === '148');
    if (stellar) seen.add(stellar.state);
    if (stellar?.state === 'failed') throw new Error(`the Stellar network failed to join: ${stellar.detail}`);
    if (last.devnet?.ready) return { seen, last };
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the local Stellar network did not join within ${timeoutMs / 1000} s; /health said ${JSON.stringify(last)}`);
}

describe('the README\'s npm start in a fresh clone, on a machine whose Node is older', () => {
  it('runs on Node 24, is healthy with the EVM chains first, the Stellar network joining and the native prover taking over after; a summary a person can act on; a later start is JSON off a terminal', async () => {
    // LOG_FORMAT=pretty: what a terminal shows (auto picks it there; colours only on a real terminal).
    const first = await npmStart({ LOG_FORMAT: 'pretty' }, /\n {2}Stop {7}Ctrl-C\n/);
    let stellarRpc: string;
    let joinSeconds: number;
    try {
      const out = first.output;
      // The one line about the Node it installed, on this first start; the service and only it on Node 24.
      if (expectedNode !== `v${machineNode}`) {
        expect(first.stderr()).toContain(`Node ${machineNode} here is older than ${NODE_MIN_MAJOR}: installed the project's Node ${NODE_PIN.version} into .tools/node/node-v${NODE_PIN.version}-linux-x64/ (once)`);
        expect(first.stderr().match(/installed the project's Node/g)).toHaveLength(1);
      }
      const versions = nodeVersionsUnder(first.child.pid!);
      expect(versions.length).toBeGreaterThan(0);
      expect(new Set(versions)).toEqual(new Set([expectedNode]));
      expect(out).toMatch(new RegExp(`\\n {2}Node {7}${expectedNode} \\(`));

      // The native prover is missing: it builds while the service serves, snarkjs proving meanwhile, one line each way.
      expect(out).toMatch(/INFO.*: prover backend: snarkjs \(PROVER_BACKEND=auto and the native prover is not built \(it is being built, first start only: native proofs take over once it is\)/);
      expect(out).toMatch(/INFO.*: native prover: building it \(cargo, first start only, a few minutes; its output in .*native-prover-build\.log\); proofs use snarkjs meanwhile/);
      expect(out).toContain('Proofs     snarkjs until the native prover is built (cargo builds it now, first start only; native proofs take over then');
      // Readable lines, not JSON objects.
      expect(out).not.toMatch(/^\{"level"/m);
      const url = /\n {2}API {8}(http:\/\/127\.0\.0\.1:\d+) /.exec(out)![1]!;
      expect(out).toContain(`Docs       ${url}/docs`);
      expect(out).toContain(`Data       ${dataDir}`);
      expect(out).toContain(`Reset      stop (Ctrl-C), delete ${dataDir}, start again`);
      // Healthy (200) as soon as it is ready, naming its Node; the Stellar network joins afterwards, /health
      // following it: degraded, naming the chain, until it joined.
      const answer = await fetch(`${url}/health`);
      expect(answer.status).toBe(200);
      const health = await answer.json() as Health;
      expect(health).toMatchObject({ node: expectedNode });
      if (!health.devnet!.ready) expect(health.status).toBe('degraded');
      expect(health.devnet!.chains.map((chain) => chain.chainId).sort()).toEqual(['148', '31337', '31338']);
      // Served while the native prover builds: the state on /health, the ads list answers, cargo's output in its file, not on the terminal.
      expect(health.prover).toMatchObject({ backend: 'snarkjs', state: 'building' });
      const ads = await fetch(`${url}/v1/ads`);
      expect(ads.status).toBe(200);
      expect(Array.isArray((await ads.json()).data)).toBe(true);
      const buildLog = path.join(dataDir, 'native-prover-build.log');
      await untilTrue(() => existsSync(buildLog) && readFileSync(buildLog, 'utf8').includes('Compiling relayer-prover-native'), `the build's output in ${buildLog}`, 30_000);
      expect(first.stderr()).not.toContain('Compiling relayer-prover-native');
      // Once built, native proofs take over: /health and one log line say so.
      writeFileSync(nativeBuildGate, '');
      await untilHealth(url, (now) => now.prover?.state !== 'building', 'the native prover to be built and take over', 60_000);
      expect((await (await fetch(`${url}/health`)).json() as Health).prover).toMatchObject({ backend: 'native', state: 'ready' });
      expect(first.stdout()).toMatch(/INFO.*: native prover built in [\d.]+ s: proofs are native from now on/);
      const joined = await untilDevnetReady(url, 120_000);
      expect(joined.last.devnet!.chains.every((chain) => chain.state === 'ready')).toBe(true);
      // Each chain: its RPC URL and network, a dev account, and how to get more; the accounts hold what it says.
      const evmDev = anvilAccounts(2)[1]!;
      for (const chainId of ['31337', '31338']) {
        const rpcUrl = new RegExp(`\\n {4}${chainId} +Devnet [AB]: RPC (http://127\\.0\\.0\\.1:\\d+), EVM chain id ${chainId}\\n {11}dev account ${evmDev.address} `).exec(out)![1]!;
        const provider = new JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true });
        expect(await provider.getBalance(evmDev.address)).toBeGreaterThanOrEqual(parseEther('9000'));
        provider.destroy();
      }
      // The Stellar network: joining in the summary (unless it was quicker), then the log line saying it joined, where and with which account.
      expect(out).toMatch(/\n {4}148 {4}Stellar Devnet: ((building|starting); it joins when ready|RPC http)/);
      const joinLine = new RegExp(`chain 148 \\(Stellar Devnet\\) joined in ([\\d.]+) s: RPC (http://127\\.0\\.0\\.1:\\d+), Stellar network passphrase "${STELLAR_DEVNET_PASSPHRASE}", ` +
        `dev account ${STELLAR_DEV_ACCOUNT.publicKey()} secret ${STELLAR_DEV_ACCOUNT.secret()}`).exec(first.stdout())!;
      joinSeconds = Number(joinLine[1]);
      stellarRpc = joinLine[2]!;
      const server = new rpc.Server(stellarRpc, { allowHttp: true });
      const routes = await (await fetch(`${url}/v1/routes?orderChainId=148`)).json();
      const tusd = routes.data.map((r: { orderToken: { symbol: string; address: string } }) => r.orderToken).find((t: { symbol: string }) => t.symbol === 'TUSD').address;
      expect(await readContract(server, STELLAR_DEVNET_PASSPHRASE, STELLAR_DEV_ACCOUNT.publicKey(), tusd, 'balance', [new Address(STELLAR_DEV_ACCOUNT.publicKey()).toScVal()])).toBe(1_000_000n * 10n ** 7n);
      // The registry names the network that joined, and reaching it works.
      const chains = await (await fetch(`${url}/v1/chains`)).json();
      expect(chains.data.find((chain: { chainId: string }) => chain.chainId === '148')).toBeDefined();

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

    // A later start over the same data, stdout not a terminal (LOG_FORMAT=auto): one JSON object per line
    // (npm's own banner aside). Stopped while the Stellar network may still be joining: it stops cleanly.
    const later = await npmStart({}, /"msg":"ready: http[^\n]*\n/);
    try {
      expect(later.stderr()).not.toContain('installed the project\'s Node');
      const lines = later.output.trim().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as {
        msg: string; summary?: { node: { version: string }; chains: { chainId: string }[]; joining: { chainId: string }[] };
      });
      expect(lines.find((line) => line.msg.startsWith('prover backend:'))!.msg).toMatch(/^prover backend: native/);
      expect(lines.some((line) => /^building/.test(line.msg))).toBe(false);
      const ready = lines.find((line) => line.msg.startsWith('ready: '))!;
      expect(ready.summary!.node.version).toBe(expectedNode);
      expect([...ready.summary!.chains, ...ready.summary!.joining].map((chain) => chain.chainId).sort()).toEqual(['148', '31337', '31338']);
    } finally {
      expect(await interrupt(later.child)).toBe(0);
    }
    console.log(`npm start in a fresh clone (Stellar network and wasm already built, the native prover's build a stand-in; Node ${expectedNode}): healthy in ${first.seconds} s, ` +
      `the Stellar network joined ${joinSeconds} s after; later start healthy in ${later.seconds} s`);
  }, 300_000);
});
