import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { childEnv, RUST_DIAGNOSTICS_ENV } from '../config/child-env.ts';

/** A running anvil node. */
export interface AnvilInstance {
  /** HTTP JSON-RPC endpoint on loopback. */
  rpcUrl: string;
  port: number;
  chainId: number;
  /** Stops the node (SIGTERM, then SIGKILL after a grace period); safe to call twice. */
  stop(): Promise<void>;
}

export interface StartAnvilOptions {
  chainId: number;
  /** TCP port; 0 (default) lets the OS pick a free one, so parallel test files never collide. */
  port?: number;
  /** Interface to bind; loopback by default. */
  host?: string;
  /** Give up when the node has not announced its port within this many milliseconds. */
  startTimeoutMs?: number;
  /**
   * Keep the chain in this file: loaded at start when it exists, written every few seconds and on
   * stop, so a restarted node continues where it was (the embedded `npm start` devnet).
   */
  statePath?: string;
}

/** Raised when the anvil binary cannot be started or does not come up in time. */
export class AnvilStartError extends Error {}

const PLATFORM_PACKAGES: Record<string, string> = {
  'linux-x64': 'linux-amd64',
  'linux-arm64': 'linux-arm64',
  'darwin-x64': 'darwin-amd64',
  'darwin-arm64': 'darwin-arm64',
  'win32-x64': 'win32-amd64',
};

/**
 * Path of the native anvil binary installed by npm `@foundry-rs/anvil` (its per-platform optional
 * dependency). The package's own `bin.mjs` is a node wrapper; spawning the binary directly means
 * `stop()` signals anvil itself and a killed test never leaves an orphan node behind.
 */
export function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  const suffix = PLATFORM_PACKAGES[`${process.platform}-${process.arch}`];
  const binary = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  if (suffix) {
    try {
      return require.resolve(`@foundry-rs/anvil-${suffix}/bin/${binary}`);
    } catch {
      // fall through to the wrapper
    }
  }
  return path.join(path.dirname(require.resolve('@foundry-rs/anvil/package.json')), 'bin.mjs');
}

/**
 * Starts anvil with the given chain id on a free loopback port and resolves once it listens.
 * Anvil mines one block per transaction (automine) and funds its ten well-known dev accounts.
 */
export async function startAnvil(options: StartAnvilOptions): Promise<AnvilInstance> {
  const host = options.host ?? '127.0.0.1';
  const child = spawn(
    anvilBinary(),
    [
      '--host', host, '--port', String(options.port ?? 0), '--chain-id', String(options.chainId),
      ...(options.statePath ? ['--state', options.statePath, '--state-interval', '5'] : []),
    ],
    // Everything anvil needs is on its command line; HOME for foundry's own config lookup.
    { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv({}, { inherit: ['HOME', ...RUST_DIAGNOSTICS_ENV] }) },
  );
  // A parent that exits without calling stop() (a crashed test run) must not leave anvil behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  child.once('exit', () => process.off('exit', killOnExit));
  const port = await waitForListening(child, options.startTimeoutMs ?? 20_000);
  let stopped: Promise<void> | undefined;
  return {
    rpcUrl: `http://${host}:${port}`,
    port,
    chainId: options.chainId,
    stop: () => (stopped ??= stopChild(child)),
  };
}

/** Reads anvil's stdout until it prints "Listening on host:port"; the port is what the OS gave it. */
function waitForListening(child: ChildProcess, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = '';
    const fail = (message: string) => {
      cleanup();
      child.kill('SIGKILL');
      reject(new AnvilStartError(`${message}\n${output.slice(-2000)}`));
    };
    const timer = setTimeout(() => fail(`anvil did not start within ${timeoutMs} ms`), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Listening on [^\s:]+:(\d+)/.exec(output);
      if (match) {
        cleanup();
        // Keep draining the pipes: a full pipe buffer would block anvil.
        child.stdout?.resume();
        child.stderr?.resume();
        resolve(Number(match[1]));
      }
    };
    const onExit = (code: number | null) => fail(`anvil exited with code ${code} before listening`);
    const onError = (error: Error) => fail(`cannot run anvil: ${error.message}`);
    function cleanup() {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
    }
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 3_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
