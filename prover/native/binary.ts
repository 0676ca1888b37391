import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildToolEnv } from '../../config/child-env.ts';

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
  const probe = spawnSync('cargo', ['--version'], { stdio: 'ignore', env: buildToolEnv() });
  return probe.error === undefined && probe.status === 0;
}

/**
 * Builds the native prover with `npm run build:native` (Cargo, profile `prover`, locked
 * dependencies; a no-op when nothing changed). Throws with Cargo's exit status when the build
 * fails, so a broken build is never mistaken for "not built".
 */
export function buildNativeProver({ quiet = false }: { quiet?: boolean } = {}): void {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const build = spawnSync(npm, ['run', '--silent', 'build:native'], {
    cwd: REPO_ROOT, stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit', env: buildToolEnv(),
  });
  if (build.error) throw new Error(`npm run build:native could not start: ${build.error.message}`);
  if (build.status !== 0) throw new Error(`npm run build:native failed (exit ${build.status}); see Cargo's output above`);
}

/** What a start does about the native prover before it picks a backend (`nativeProverStep`). */
export type NativeProverStep =
  /** PROVER_BACKEND=snarkjs: the native prover is not wanted. */
  | 'not-wanted'
  /** The binary is there: use it (later starts, or a machine where someone built it). */
  | 'built'
  /** Missing and cargo runs here: build it now, once. */
  | 'build'
  /** Missing and no cargo: proofs use snarkjs (PROVER_BACKEND=auto) or start-up stops (native). */
  | 'no-cargo';

/**
 * Decides what `npm start` does about the native prover: builds it whenever it is missing and cargo
 * is there (as it builds the local Stellar network), so proofs are native from the first start;
 * falls to snarkjs only when cargo is absent. `cargo` is asked lazily: a built binary needs no probe.
 */
export function nativeProverStep(choice: 'auto' | 'native' | 'snarkjs', built: boolean, cargo: () => boolean): NativeProverStep {
  if (choice === 'snarkjs') return 'not-wanted';
  if (built) return 'built';
  return cargo() ? 'build' : 'no-cargo';
}

/** What `ensureNativeProver` did, for the start-up log and summary. */
export interface NativeProverPreparation {
  step: NativeProverStep;
  /** Seconds the build took, when it ran and succeeded. */
  buildSeconds?: number;
  /** Why the native prover is not there (no cargo, a failed build), for the backend's start-up line. */
  unavailable?: string;
}

/** What `ensureNativeProver` needs; tests give their own binary path (a scratch target) and build. */
export interface EnsureNativeProverOptions {
  choice: 'auto' | 'native' | 'snarkjs';
  binary?: string;
  cargo?: () => boolean;
  build?: () => void;
  logger: { info(details: object, message: string): void; warn(details: object, message: string): void };
}

/**
 * The first start's native prover: builds it when it is missing and cargo runs here (minutes, once;
 * later starts find it), logging the build and its time. When cargo is absent, or the build fails
 * under PROVER_BACKEND=auto, it says plainly that proofs use snarkjs and how to change that; under
 * PROVER_BACKEND=native a failed build throws. Never throws for a missing cargo: the backend
 * choice (`announceProverBackend`) decides whether that stops start-up.
 */
export function ensureNativeProver(options: EnsureNativeProverOptions): NativeProverPreparation {
  const { choice, logger, binary = NATIVE_PROVER_BINARY } = options;
  const step = nativeProverStep(choice, nativeProverBuilt(binary), options.cargo ?? cargoAvailable);
  if (step === 'no-cargo') {
    logger.warn(
      { binary },
      'cargo is not installed, so the native prover cannot be built: proofs use snarkjs, about five times slower. ' +
        'Install Rust (rustup, README "Two commands") and start again to prove natively',
    );
    return { step, unavailable: 'cargo is not installed' };
  }
  if (step !== 'build') return { step };
  logger.info({ binary }, 'building the native prover (cargo, profile prover; first start only, a few minutes)');
  const started = performance.now();
  try {
    (options.build ?? (() => buildNativeProver({ quiet: true })))();
  } catch (error) {
    if (choice === 'native') throw error;
    logger.warn({ binary, err: error }, 'the native prover\'s build failed: proofs use snarkjs. Run npm run build:native to see why, then start again');
    return { step, unavailable: `its build failed: ${(error as Error).message}` };
  }
  const buildSeconds = Math.round((performance.now() - started) / 100) / 10;
  logger.info({ binary, buildSeconds }, `native prover built in ${buildSeconds} s (later starts reuse it)`);
  return { step, buildSeconds };
}
