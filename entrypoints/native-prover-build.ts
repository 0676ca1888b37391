import path from 'node:path';
import type { ProverBackend, ResolvedProverBackend } from '../prover/backend.ts';
import { buildNativeProverInBackground } from '../prover/native/binary.ts';

/**
 * Where proving stands: `ready` (the backend proves, nothing pending), `building` (the native
 * prover builds; snarkjs proves meanwhile), `failed` (its build failed; snarkjs proves).
 */
export type ProverState = 'building' | 'ready' | 'failed';

/** What proves and whether the native prover is still coming, as `/health` and the summary report it. */
export interface ProverStatus {
  /** What proves now. */
  backend: ProverBackend;
  state: ProverState;
  /** What it is doing, or why the build failed. */
  detail?: string;
  /** Seconds since it entered `state`. */
  seconds: number;
}

/** The prover's status over a start: fixed when nothing is built, else following the build (`buildNativeProverLater`). */
export interface ProverProgress {
  status(): ProverStatus;
  /** Ends a build under way (the service stops) and waits for it; nothing after it switches the pool. */
  stop(): Promise<void>;
}

/** The status of a start that builds nothing: the backend it resolved, ready. */
export function proverReady(resolved: ResolvedProverBackend): ProverProgress {
  const since = performance.now();
  return {
    status: () => ({ backend: resolved.backend, state: 'ready', seconds: secondsSince(since, 0) }),
    stop: async () => undefined,
  };
}

export interface NativeProverBuildDeps {
  logger: { info(details: object, message: string): void; warn(details: object, message: string): void };
  /** Moves proving to the native prover once it is built (the pool's `reload`); resolves to what proves then. */
  takeOver: () => Promise<ProverBackend>;
  /** Where cargo's output goes (DATA_DIR/native-prover-build.log on `npm start`). */
  logFile: string;
  /** The build; default `npm run build:native` in the background (tests give one they control). */
  build?: (options: { logFile: string; signal: AbortSignal }) => Promise<void>;
}

const BUILDING = 'cargo builds the native prover (first start only, a few minutes); snarkjs proves meanwhile';

/**
 * The first start's native prover, built while the service serves: says in one line that it
 * builds (cargo's output in `logFile`, not on the terminal beside the Stellar network's), proves
 * with snarkjs meanwhile, and once built moves proving to it (`takeOver`) and says so in one line,
 * with the build's time. A failed build leaves snarkjs proving, the failure in the log and in
 * `status()`; `stop` ends a build under way.
 */
export function buildNativeProverLater(deps: NativeProverBuildDeps): ProverProgress {
  const { logger, logFile } = deps;
  const build = deps.build ?? buildNativeProverInBackground;
  const cancel = new AbortController();
  let current: Omit<ProverStatus, 'seconds'> = { backend: 'snarkjs', state: 'building', detail: BUILDING };
  let since = performance.now();
  const enter = (next: Omit<ProverStatus, 'seconds'>) => {
    current = next;
    since = performance.now();
  };
  const started = performance.now();
  const shown = path.relative(process.cwd(), logFile) || logFile;
  logger.info({ logFile }, `native prover: building it (cargo, first start only, a few minutes; its output in ${shown}); ` +
    'proofs use snarkjs meanwhile, native proofs take over once it is built; GET /health shows its state');
  const building = (async () => {
    await build({ logFile, signal: cancel.signal });
    if (cancel.signal.aborted) return;
    const buildSeconds = secondsSince(started, 1);
    const backend = await deps.takeOver();
    enter({ backend, state: 'ready' });
    logger.info({ buildSeconds, backend },
      `native prover built in ${buildSeconds} s: proofs are ${backend} from now on (later starts use it from the start)`);
  })().catch((error: unknown) => {
    if (cancel.signal.aborted) return;
    enter({ backend: 'snarkjs', state: 'failed', detail: (error as Error).message.split('\n')[0] });
    logger.warn({ err: error, logFile },
      `the native prover's build failed: proofs stay on snarkjs. See ${logFile} (or run npm run build:native), then start again`);
  });
  return {
    status: () => ({ ...current, seconds: secondsSince(since, 0) }),
    async stop() {
      cancel.abort();
      await building;
    },
  };
}

/** Seconds since `started`, rounded to `digits` decimals. */
function secondsSince(started: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.floor(((performance.now() - started) / 1000) * scale) / scale;
}

/** Where the native prover's build writes cargo's output: beside the run's other state. */
export function nativeProverBuildLog(dataDir: string): string {
  return path.resolve(dataDir, 'native-prover-build.log');
}
