import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { buildToolEnv } from './child-env.ts';

export interface BuildToolOptions {
  /** Where it runs (the repository root for cargo and npm). */
  cwd: string;
  /** Ends the build under way, with every process it started (the service stops meanwhile). */
  signal?: AbortSignal;
  /** A file its output goes to (made anew); by default this process's stderr (cargo's progress on the terminal). */
  logFile?: string;
  /** Said after "could not start: ..." when the tool is missing (what to install). */
  missingHint?: string;
}

/**
 * Runs a build tool (cargo, rustup, or npm running one) as a child the event loop does not wait
 * on, with the build tools' allow-listed environment (`buildToolEnv`): resolves when it exits 0,
 * rejects naming the command, its exit status and where its output went otherwise. Its stdout is
 * dropped (a service's stdout is its log); its stderr goes to this process's or to `logFile`.
 * The child leads its own process group, so `signal` ends the whole build
 * (npm, its shell, cargo and the compilers cargo runs), not just its first process.
 */
export function runBuildTool(command: string, args: readonly string[], options: BuildToolOptions): Promise<void> {
  const { signal } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error(`${command} not started: the service is stopping`));
    const { logFile } = options;
    if (logFile) mkdirSync(path.dirname(logFile), { recursive: true });
    const output = logFile ? openSync(logFile, 'w') : 'inherit';
    let child: ChildProcess;
    try {
      child = spawn(command, args, { cwd: options.cwd, stdio: ['ignore', 'ignore', output], env: buildToolEnv(), detached: true });
    } finally {
      // The child holds its own copy of the descriptor.
      if (typeof output === 'number') closeSync(output);
    }
    const stop = () => {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // Already gone.
      }
    };
    signal?.addEventListener('abort', stop, { once: true });
    const done = () => signal?.removeEventListener('abort', stop);
    child.once('error', (error) => {
      done();
      reject(new Error(`${command} could not start: ${error.message}${options.missingHint ? ` (${options.missingHint})` : ''}`));
    });
    child.once('exit', (code, killedBy) => {
      done();
      const where = logFile ? `in ${logFile}` : 'above';
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} failed (${killedBy ?? `exit ${code}`}); see its output ${where}`));
    });
  });
}
