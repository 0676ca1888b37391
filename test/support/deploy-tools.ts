import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The repository root. */
export const ROOT = new URL('../..', import.meta.url).pathname;

/**
 * Path of a deploy tool installed by the test setup (scripts/install-deploy-tools.mjs) into
 * .tools/deploy/bin. Missing means the setup failed: that is an error, never a skip.
 */
export function deployTool(name: 'hadolint' | 'kubectl' | 'kubernetes-validate' | 'promtool' | 'prometheus'): string {
  const file = path.join(ROOT, '.tools', 'deploy', 'bin', name);
  if (!existsSync(file)) throw new Error(`${name} is not installed in .tools/deploy/bin: run node scripts/install-deploy-tools.mjs`);
  return file;
}

/** Runs a deploy tool from the repository root; returns its status and output. */
export function runTool(name: Parameters<typeof deployTool>[0], args: string[], cwd = ROOT): { status: number; output: string } {
  const result = spawnSync(deployTool(name), args, { cwd, encoding: 'utf8' });
  if (result.error) throw result.error;
  return { status: result.status ?? -1, output: `${result.stdout}${result.stderr}` };
}
