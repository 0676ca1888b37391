import type { ChildProcess } from 'node:child_process';
import type { JsonResponse } from './wallets.ts';

/** A service started as its own process (entrypoints/main.ts), and the URL its ready line named. */
export interface RunningService { process: ChildProcess; url: string }

/** Resolves with the URL of the `ready:` log line the child prints on stdout; rejects if it exits first. */
export function readyUrl(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const ready = /"msg":"ready: (http:\/\/[^ "]+)/.exec(buffered);
      if (ready) resolve(ready[1]!);
    });
    child.once('exit', (code) => reject(new Error(`service exited with ${code} before it was ready`)));
  });
}

/** One JSON request to a running service, with a Bearer token when given. */
export async function requestService(service: RunningService, method: string, route: string, body?: unknown, token?: string): Promise<JsonResponse> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${service.url}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** SIGKILLs the child (a crash, not a shutdown) and resolves once it has exited. */
export const killed = (child: ChildProcess) => new Promise<void>((resolve) => {
  if (child.exitCode !== null || child.signalCode !== null) return resolve();
  child.once('exit', () => resolve());
  child.kill('SIGKILL');
});
