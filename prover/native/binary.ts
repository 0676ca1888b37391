import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runBuildTool } from '../../config/build-tool.ts';
import { buildToolEnv } from '../../config/child-env.ts';

/** The repository root, where the Cargo workspace and its `target/` live. */
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Where `npm run build:native` puts the prover: Cargo profile `prover` (see the root Cargo.toml),
 * target directory `target/` of the repository whatever CARGO_TARGET_DIR says.
 */
export const NATIVE_PROVER_BINARY = fileURLToPath(new URL('../../target/prover/relayer-groth16', import.meta.url));

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

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
  const build = spawnSync(NPM, ['run', '--silent', 'build:native'], {
    cwd: REPO_ROOT, stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit', env: buildToolEnv(),
  });
  if (build.error) throw new Error(`npm run build:native could not start: ${build.error.message}`);
  if (build.status !== 0) throw new Error(`npm run build:native failed (exit ${build.status}); see Cargo's output above`);
}

/**
 * `buildNativeProver` without holding the event loop, for a service that serves while it builds
 * (`npm start`'s first start: snarkjs proves until native proofs take over). The same command
 * (`npm run build:native`), its output into `logFile`; rejects when the build fails, naming the
 * file. `signal` ends the build under way (the service stops meanwhile).
 */
export function buildNativeProverInBackground({ logFile, signal }: { logFile: string; signal?: AbortSignal }): Promise<void> {
  return runBuildTool(NPM, ['run', '--silent', 'build:native'], { cwd: REPO_ROOT, logFile, signal });
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
  /** True when the build is left to the caller, to run while the service serves (`inBackground`). */
  later?: boolean;
  /** Why the native prover is not there (no cargo, a failed build), for the backend's start-up line. */
  unavailable?: string;
}

/** Why proofs use snarkjs while the native prover is built in the background (the start-up line and summary). */
export const NATIVE_PROVER_BUILDING = 'it is being built, first start only: native proofs take over once it is';

/** What `ensureNativeProver` needs; tests give their own binary path (a scratch target) and build. */
export interface EnsureNativeProverOptions {
  choice: 'auto' | 'native' | 'snarkjs';
  binary?: string;
  cargo?: () => boolean;
  build?: () => void;
  /**
   * Under PROVER_BACKEND=auto, leave a needed build to the caller (`later` in the answer), which runs
   * it while serving with snarkjs. PROVER_BACKEND=native still builds first: it proves natively or not at all.
   */
  inBackground?: boolean;
  logger: { info(details: object, message: string): void; warn(details: object, message: string): void };
}

/**
 * The first start's native prover: builds it when it is missing and cargo runs here (minutes, once;
 * later starts find it), logging the build and its time. When cargo is absent, or the build fails
 * under PROVER_BACKEND=auto, it says plainly that proofs use snarkjs and how to change that; under
 * PROVER_BACKEND=native a failed build throws. With `inBackground` (and `auto`) it only says a
 * build is needed (`later`), for the caller to run while serving. Never throws for a missing cargo: the backend
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
  if (options.inBackground && choice === 'auto') return { step, later: true, unavailable: NATIVE_PROVER_BUILDING };
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
