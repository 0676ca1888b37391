import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository root, where the Cargo workspace and its `target/` live. */
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Where `npm run build:native` puts the prover: Cargo profile `prover` (see the root Cargo.toml),
 * target directory `target/` of the repository whatever CARGO_TARGET_DIR says.
 */
export const NATIVE_PROVER_BINARY = fileURLToPath(new URL('../../target/prover/relayer-groth16', import.meta.url));

/** True when the native prover binary has been built. */
export function nativeProverBuilt(binary: string = NATIVE_PROVER_BINARY): boolean {
  return existsSync(binary);
}

/** True when `cargo` runs on this machine. */
export function cargoAvailable(): boolean {
  const probe = spawnSync('cargo', ['--version'], { stdio: 'ignore' });
  return probe.error === undefined && probe.status === 0;
}

/**
 * Builds the native prover with `npm run build:native` (Cargo, profile `prover`, locked
 * dependencies; a no-op when nothing changed). Throws with Cargo's exit status when the build
 * fails, so a broken build is never mistaken for "not built".
 */
export function buildNativeProver({ quiet = false }: { quiet?: boolean } = {}): void {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const build = spawnSync(npm, ['run', '--silent', 'build:native'], { cwd: REPO_ROOT, stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit' });
  if (build.error) throw new Error(`npm run build:native could not start: ${build.error.message}`);
  if (build.status !== 0) throw new Error(`npm run build:native failed (exit ${build.status}); see Cargo's output above`);
}
