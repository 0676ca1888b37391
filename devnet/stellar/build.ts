import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBuildTool } from '../../config/build-tool.ts';
import { buildToolEnv } from '../../config/child-env.ts';

/** The repository root, where the Cargo workspace and its `target/` live. */
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The local Soroban network binary (Cargo profile `devnet`, see the root Cargo.toml). */
export const STELLAR_DEVNET_BINARY = fileURLToPath(new URL('../../target/devnet/stellar-devnet', import.meta.url));

/**
 * The wasm's own Cargo target directory, one per checkout (under `target/wasm/`). A cdylib's file
 * name carries no hash, so checkouts sharing one target directory (git worktrees whose `target/`
 * links to a shared one) would overwrite each other's contracts, while cargo still sees its own
 * build as fresh and never writes them back: a test would deploy another checkout's contracts.
 */
const WASM_TARGET_DIR = wasmTargetDirOf(REPO_ROOT);

/** The wasm's Cargo target directory of the checkout at `repoRoot` (relative to it): see WASM_TARGET_DIR. */
export function wasmTargetDirOf(repoRoot: string): string {
  return path.join('target', 'wasm', createHash('sha256').update(realpathSync(repoRoot)).digest('hex').slice(0, 12));
}

const wasmFile = (crate: string) => path.join(REPO_ROOT, WASM_TARGET_DIR, 'wasm32v1-none', 'release', `${crate}.wasm`);

/** The contracts' wasm, as `cargo build --release --target wasm32v1-none` writes them (in this checkout's WASM_TARGET_DIR). */
export const SOROBAN_WASM = {
  adManager: wasmFile('relayer_soroban_ad_manager'),
  orderPortal: wasmFile('relayer_soroban_order_portal'),
  testToken: wasmFile('relayer_soroban_test_token'),
} as const;

const WASM_TARGET = 'wasm32v1-none';

function run(command: string, args: readonly string[], quiet: boolean): void {
  const result = spawnSync(command, args, { cwd: REPO_ROOT, stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit', env: buildToolEnv() });
  if (result.error) throw new Error(`${command} could not start: ${result.error.message} (the Stellar devnet needs Rust: cargo and rustup)`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status}); see its output above`);
}

/** `run` as a child process the event loop does not wait on: resolves when it succeeded. */
function runInBackground(command: string, args: readonly string[], signal?: AbortSignal): Promise<void> {
  return runBuildTool(command, args, { cwd: REPO_ROOT, signal, missingHint: 'the Stellar devnet needs Rust: cargo and rustup' });
}

/** True when rustc runs here with the `wasm32v1-none` target (rustup's toolchain of rust-toolchain.toml). */
function wasmTargetInstalled(): boolean {
  const installed = spawnSync('rustup', ['target', 'list', '--installed'], { cwd: REPO_ROOT, encoding: 'utf8', env: buildToolEnv() });
  if (installed.error) {
    throw new Error(`rustup could not start: ${installed.error.message}; the repository's Rust toolchain ` +
      `(rust-toolchain.toml) comes from rustup`);
  }
  return installed.status === 0 && installed.stdout.split('\n').some((line) => line.trim() === WASM_TARGET);
}

/**
 * Makes sure rustup has the toolchain rust-toolchain.toml pins, with its `wasm32v1-none` target:
 * `rustup toolchain install` (which reads that file) when rustc cannot run here or lacks the target.
 * Needed because rustup may be told not to install toolchains by itself (RUSTUP_AUTO_INSTALL=0, as
 * on our machines); a no-op once installed. Throws when rustup is missing or the install fails.
 */
export function ensureRustToolchain({ quiet = false }: { quiet?: boolean } = {}): void {
  if (!wasmTargetInstalled()) run('rustup', RUST_TOOLCHAIN_INSTALL, quiet);
}

const RUST_TOOLCHAIN_INSTALL = ['toolchain', 'install', '--no-self-update'];

/**
 * Builds what the local Stellar network needs: the AdManager, OrderPortal and test token as
 * wasm (`wasm32v1-none`, release profile) and the `stellar-devnet` binary on the real Soroban
 * host (profile `devnet`). Locked dependencies; a no-op when nothing changed. Throws when a build fails.
 */
export function buildStellarDevnet({ quiet = false }: { quiet?: boolean } = {}): void {
  ensureRustToolchain({ quiet });
  run('cargo', STELLAR_WASM_BUILD, quiet);
  run('cargo', STELLAR_DEVNET_BUILD, quiet);
}

/**
 * `buildStellarDevnet` (quiet: cargo's progress on stderr) without holding the event loop, for a
 * service that serves while it builds (`npm start`: the Stellar network joins once built).
 * Rejects when a step fails; `signal` ends the step under way (the service stops meanwhile).
 */
export async function buildStellarDevnetInBackground(signal?: AbortSignal): Promise<void> {
  if (!wasmTargetInstalled()) await runInBackground('rustup', RUST_TOOLCHAIN_INSTALL, signal);
  await runInBackground('cargo', STELLAR_WASM_BUILD, signal);
  await runInBackground('cargo', STELLAR_DEVNET_BUILD, signal);
}

/**
 * The two cargo builds of `buildStellarDevnet` (run from the repository root), for a caller that
 * runs them beside other builds (the test setup): the wasm lives in its own target directory, so
 * its build never waits for the `devnet`/`prover` profiles' locks.
 */
export const STELLAR_WASM_BUILD: readonly string[] = ['build', '--locked', '--release', '--target-dir', WASM_TARGET_DIR, '--target', WASM_TARGET,
  '-p', 'relayer-soroban-ad-manager', '-p', 'relayer-soroban-order-portal', '-p', 'relayer-soroban-test-token'];
export const STELLAR_DEVNET_BUILD: readonly string[] = ['build', '--locked', '--profile', 'devnet', '--target-dir', 'target', '-p', 'relayer-stellar-devnet'];

/**
 * `cargo test` of the Soroban contracts' host tests (contracts/soroban/cargo.test.ts runs them; the
 * ceremony test runs one ignored test of the same build), in this checkout's own target directory:
 * in a `target/` shared by several checkouts another checkout's build of the same crate can look
 * fresh to cargo and run instead. One selection, so one build (features unify over it) serves both.
 * The selection is the one crate that holds Rust tests (`relayer-soroban-tests`, which builds the
 * contracts as its dependencies): the contract crates and the PKCS#11 signer have none, and selecting
 * them built empty test binaries and the signer's dependencies in this profile for nothing.
 */
export const SOROBAN_HOST_TESTS: readonly string[] = ['test', '--locked', '-p', 'relayer-soroban-tests', '--target-dir', WASM_TARGET_DIR];

/** True when the binary and every wasm exist. */
export function stellarDevnetBuilt(): boolean {
  return existsSync(STELLAR_DEVNET_BINARY) && Object.values(SOROBAN_WASM).every((file) => existsSync(file));
}
