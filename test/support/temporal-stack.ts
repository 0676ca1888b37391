import { spawn, type ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { freeLoopbackPort } from '../../entrypoints/free-port.ts';

/** A Temporal dev server and the service's worker and prover processes, for tests and bench:trades. */

const root = new URL('../..', import.meta.url).pathname;

export interface DevServer { process: ChildProcess; address: string }

/**
 * `temporal server start-dev` (the CLI at `cli`) on free ports with the trade search attributes;
 * resolves once it answers. In memory, or in `dbFile` (SQLite), which a restarted server resumes.
 */
export async function startTemporalDevServer(cli: string, options: { dbFile?: string; namespaces?: readonly string[] } = {}): Promise<DevServer> {
  for (let attempt = 0; ; attempt++) {
    const port = await freeLoopbackPort();
    const child = spawn(cli, [
      'server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port), '--http-port', String(await freeLoopbackPort()),
      '--metrics-port', String(await freeLoopbackPort()), '--log-level', 'error',
      '--search-attribute', 'TradeStatus=Keyword', '--search-attribute', 'AdId=Keyword', '--search-attribute', 'RouteId=Keyword',
      ...(options.dbFile ? ['--db-filename', options.dbFile] : []),
      ...(options.namespaces ?? []).flatMap((namespace) => ['--namespace', namespace]),
    ], { stdio: ['ignore', 'ignore', 'inherit'] });
    const address = `127.0.0.1:${port}`;
    const exited = new Promise<'exited'>((resolve) => child.once('exit', () => resolve('exited')));
    const ready = (async () => {
      for (let i = 0; i < 150; i++) {
        try {
          const connection = await Connection.connect({ address, connectTimeout: 1_000 });
          await connection.workflowService.getSystemInfo({});
          await connection.close();
          return 'ready' as const;
        } catch {
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      return 'timeout' as const;
    })();
    const outcome = await Promise.race([ready, exited]);
    if (outcome === 'ready') return { process: child, address };
    child.kill('SIGKILL');
    // A port taken between probing and binding: try other ports, a few times.
    if (attempt >= 3) throw new Error(`temporal server start-dev did not come up (${outcome})`);
  }
}

/** Namespaces the file's shared dev server creates at launch, one per stack that runs on it. */
const SHARED_NAMESPACES = ['stack-1', 'stack-2', 'stack-3', 'stack-4'];

let shared: { server: Promise<DevServer>; users: number; handedOut: number } | undefined;

/** A namespace of the test file's one dev server, and how to give it back. */
export interface TemporalLease { address: string; namespace: string; release(): Promise<void> }

/**
 * A namespace of its own on the dev server this test file shares (started on the first lease,
 * stopped when the last lease is given back): every Temporal stack of a file costs one server
 * start, not one each, and two stacks never run each other's workflows (each has its own database).
 */
export async function leaseTemporalNamespace(cli: string): Promise<TemporalLease> {
  shared ??= { server: startTemporalDevServer(cli, { namespaces: SHARED_NAMESPACES }), users: 0, handedOut: 0 };
  const mine = shared;
  const namespace = SHARED_NAMESPACES[mine.handedOut++];
  if (!namespace) throw new Error(`a test file runs at most ${SHARED_NAMESPACES.length} Temporal stacks on its shared dev server`);
  mine.users++;
  let server: DevServer;
  try {
    server = await mine.server;
  } catch (error) {
    if (shared === mine) shared = undefined;
    throw error;
  }
  let released = false;
  return {
    address: server.address,
    namespace,
    async release() {
      if (released) return;
      released = true;
      if (--mine.users > 0) return;
      if (shared === mine) shared = undefined;
      await stopped(server.process, 'SIGTERM');
    },
  };
}

export interface ServiceProcess {
  child: ChildProcess;
  /** Where it listens: the metrics server of a worker or prover, the API of an api. */
  url: string;
  metricsUrl: string;
  output: () => string;
  /** Its log lines at level error or fatal since it started (the last 50), e.g. the cause of a 500. */
  errors: () => string[];
  /** Its log lines since it was ready that `options.watch` picked out (the first 20). */
  watched: () => string[];
}

/**
 * `npm run worker` / `npm run prover` / `npm run api` as its own OS process (node with tsx's
 * loader, so SIGKILL hits it), with `env` added to the test's environment, or with
 * `only: true` to PATH alone (a process given nothing but its own settings). An api needs a
 * migrated DATABASE_URL; its `metricsUrl` answers only with METRICS_ON_API_PORT=true.
 */
export async function startServiceProcess(
  kind: 'worker' | 'prover' | 'api', env: Record<string, string>, options: { only?: boolean; watch?: (line: string) => boolean } = {},
): Promise<ServiceProcess> {
  const base = options.only ? { PATH: process.env.PATH ?? '' } : process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', `entrypoints/${kind}-main.ts`], {
    cwd: root,
    // The books audit's cron job is off unless a test asks for it: nothing acts behind a test's back.
    env: { ...base, HOST: '127.0.0.1', METRICS_PORT: '0', LOG_LEVEL: 'info', BOOKS_AUDIT_CRON: 'off', RETENTION_CRON: 'off', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buffered = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      // Only the start-up lines are kept: a long-running process must not grow this without bound.
      if (buffered.length < 200_000) buffered += chunk.toString();
      const port = /"port":(\d+),"msg":"(?:worker metrics|prover metrics|API) listening"/.exec(buffered);
      if (port && /"msg":"ready/.test(buffered)) resolve(`http://127.0.0.1:${port[1]}`);
    });
    child.once('exit', (code, signal) => reject(new Error(`${kind} exited (${code ?? signal}) before it was ready:\n${buffered}`)));
  });
  // Keep reading, so a process that logs much never blocks on a full pipe; keep its error lines.
  const errors: string[] = [];
  const watched: string[] = [];
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!.slice(-100_000);
    for (const line of lines) {
      if (/"level":(50|60)/.test(line)) errors.push(errorLine(line));
      if (watched.length < 20 && options.watch?.(line)) watched.push(line.slice(0, 1_000));
    }
    errors.splice(0, Math.max(0, errors.length - 50));
  });
  child.stdout!.resume();
  return { child, url, metricsUrl: `${url}/metrics`, output: () => buffered, errors: () => [...errors], watched: () => [...watched] };
}

/** A pino error line as `message: error type: error message (code)`, or its first 500 characters if it is not JSON. */
export function errorLine(line: string): string {
  try {
    const entry = JSON.parse(line) as { msg?: string; err?: { type?: string; message?: string; code?: string } };
    const err = entry.err ? `: ${entry.err.type ?? 'Error'}: ${entry.err.message ?? ''}${entry.err.code ? ` (${entry.err.code})` : ''}` : '';
    return `${entry.msg ?? ''}${err}`;
  } catch {
    return line.slice(0, 500);
  }
}

/** Sends `signal` and resolves with the exit code once the process is gone (at once if it already is). */
export const stopped = (child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL') => new Promise<number | null>((resolve) => {
  if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
  child.once('exit', (code) => resolve(code));
  child.kill(signal);
});
