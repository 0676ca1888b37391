import { NATIVE_PROVER_BINARY, nativeProverBuilt } from './native/binary.ts';
import { NativeProverUnavailableError } from './errors.ts';

/** What proves inside the pool: the Rust binary (`prover/native/`) or snarkjs's wasm prover. */
export type ProverBackend = 'native' | 'snarkjs';
/** `PROVER_BACKEND`: a backend, or `auto` (native when built, else snarkjs). */
export type ProverBackendChoice = 'auto' | ProverBackend;

/** The backend a pool will use, the binary when native, and a sentence saying why (for the start-up log). */
export interface ResolvedProverBackend {
  backend: ProverBackend;
  binary?: string;
  reason: string;
}

/**
 * Resolves `PROVER_BACKEND`: `snarkjs` always works; `native` needs the binary and throws
 * `NativeProverUnavailableError` without it; `auto` takes native when it is built, else snarkjs,
 * saying why (`notBuiltReason`, when the caller knows it: no cargo, a failed build).
 */
export function resolveProverBackend(
  choice: ProverBackendChoice = 'auto',
  binary: string = NATIVE_PROVER_BINARY,
  notBuiltReason?: string,
): ResolvedProverBackend {
  if (choice === 'snarkjs') return { backend: 'snarkjs', reason: 'PROVER_BACKEND=snarkjs' };
  const built = nativeProverBuilt(binary);
  if (choice === 'native') {
    if (!built) throw new NativeProverUnavailableError(binary);
    return { backend: 'native', binary, reason: 'PROVER_BACKEND=native' };
  }
  return built
    ? { backend: 'native', binary, reason: `PROVER_BACKEND=auto and the native prover is built (${binary})` }
    : {
      backend: 'snarkjs',
      reason: `PROVER_BACKEND=auto and the native prover is not built ` +
        `(${notBuiltReason ?? 'npm run build:native needs cargo'}): proving with snarkjs`,
    };
}

/**
 * Resolves `PROVER_BACKEND` and logs, once at start-up, which backend proofs will use and why
 * (so a run without cargo says it proves with snarkjs). Throws like `resolveProverBackend`.
 */
export function announceProverBackend(
  logger: { info(details: object, message: string): void },
  { choice = 'auto', nativeThreads = 1, binary = NATIVE_PROVER_BINARY, notBuiltReason }: {
    choice?: ProverBackendChoice;
    nativeThreads?: number;
    binary?: string;
    notBuiltReason?: string;
  } = {},
): ResolvedProverBackend {
  const resolved = resolveProverBackend(choice, binary, notBuiltReason);
  const details = resolved.backend === 'native' ? { backend: 'native', binary: resolved.binary, nativeThreads } : { backend: 'snarkjs' };
  logger.info(details, `prover backend: ${resolved.backend} (${resolved.reason})`);
  return resolved;
}
