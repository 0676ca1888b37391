import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { freeLoopbackPort } from '../../entrypoints/free-port.ts';
import { deployTool, ROOT } from './deploy-tools.ts';
import { eventually } from './devnet-client.ts';

/**
 * The processes of a local stack, without containers: package scripts as compose runs them,
 * Temporal's dev server, Debian's Prometheus. Each keeps its output for failure messages.
 */

export interface Running { child: ChildProcess; output: () => string }
/** A process serving /metrics at `metrics` (host:port). */
export interface Served extends Running { metrics: string }

/** A package script as its own process group (npm -> tsx -> node), output kept for failures. */
export function runScript(script: string, env: Record<string, string>): Running {
  const child = spawn('npm', ['run', '--silent', script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  return { child, output: () => output };
}

export const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => {
  if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
  child.once('exit', (code) => resolve(code));
});

/**
 * SIGTERM, as a container stop sends it: to the whole process group of a package script (npm,
 * tsx, node), to the process itself otherwise; SIGKILL after 15 s.
 */
export async function stop(running: Running | undefined, group = true): Promise<void> {
  if (!running || running.child.exitCode !== null || running.child.signalCode !== null) return;
  const done = exited(running.child);
  const signal = (name: NodeJS.Signals) => {
    try { group ? process.kill(-running.child.pid!, name) : running.child.kill(name); } catch { /* already gone */ }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 15_000);
  await done;
  clearTimeout(timer);
}

/** Debian's Prometheus on a free loopback port with `configFile`; resolves once it is ready. */
export async function startPrometheus(configFile: string, dataDir: string): Promise<Running & { url: string }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freeLoopbackPort();
    const child = spawn(deployTool('prometheus'), [
      `--config.file=${configFile}`, `--storage.tsdb.path=${path.join(dataDir, `tsdb-${attempt}`)}`,
      `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    const url = `http://127.0.0.1:${port}`;
    const ready = await eventually('prometheus ready', async () => {
      if (child.exitCode !== null) return 'exited';
      return fetch(`${url}/-/ready`).then((r) => (r.ok ? 'ready' : 'starting'), () => 'starting');
    }, (state) => state !== 'starting', 30_000);
    if (ready === 'ready') return { child, output: () => output, url };
    if (attempt === 3 || !/address already in use/.test(output)) throw new Error(`prometheus did not start:\n${output}`);
  }
}

/** `temporal server start-dev` (the pinned CLI), in memory, on free ports; resolves once it answers. */
export async function startTemporal(cli: string): Promise<Running & { address: string; metrics: string }> {
  for (let attempt = 1; ; attempt++) {
    const [port, httpPort, metricsPort] = [await freeLoopbackPort(), await freeLoopbackPort(), await freeLoopbackPort()];
    const child = spawn(cli, [
      'server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port), '--http-port', String(httpPort),
      '--metrics-port', String(metricsPort), '--log-level', 'error',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    const address = `127.0.0.1:${port}`;
    const state = await eventually('temporal ready', async () => {
      if (child.exitCode !== null) return 'exited';
      try {
        const connection = await Connection.connect({ address, connectTimeout: 1_000 });
        await connection.workflowService.getSystemInfo({});
        await connection.close();
        return 'ready';
      } catch {
        return 'starting';
      }
    }, (s) => s !== 'starting', 60_000);
    if (state === 'ready') return { child, output: () => output, address, metrics: `127.0.0.1:${metricsPort}` };
    // A port taken between probing and binding: other ports, a few times.
    if (attempt === 3) throw new Error(`temporal server start-dev did not come up:\n${output}`);
  }
}

/** A package script serving /metrics on a port of its own (METRICS_PORT=0); resolves once it is ready. */
export async function startServed(script: 'api' | 'worker' | 'prover', env: Record<string, string>): Promise<Served & { url?: string }> {
  const running = runScript(script, env);
  const what = script === 'api' ? 'metrics' : `${script} metrics`;
  const ready = await eventually(`npm run ${script} ready`, async () => {
    if (running.child.exitCode !== null) throw new Error(`npm run ${script} exited ${running.child.exitCode}:\n${running.output()}`);
    const out = running.output();
    const port = new RegExp(`"port":(\\d+)[^\\n]*"msg":"${what} listening"`).exec(out)?.[1];
    const ready = /"msg":"ready(?:: (http:\/\/[^ "]+))?/.exec(out);
    return port && ready ? { metrics: `127.0.0.1:${port}`, url: ready[1] } : undefined;
  }, (found) => found !== undefined, 90_000);
  return { ...running, ...ready! };
}
