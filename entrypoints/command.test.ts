import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;

/** `node --import tsx entrypoints/command.ts <args>` as the image runs it, with `env` instead of ours. */
function command(args: string[], env: Record<string, string>) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'entrypoints/command.ts', ...args], {
    cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH!, LOG_LEVEL: 'silent', ...env },
  });
  return { status: result.status, stderr: result.stderr };
}

describe('the image entry point (entrypoints/command.ts)', () => {
  it('refuses an unknown command with exit 64, naming the commands it knows', () => {
    const { status, stderr } = command(['apii'], {});
    expect(status).toBe(64);
    expect(stderr).toContain("unknown command 'apii': expected one of api, worker, prover, migrate, embedded");
  });

  it('runs the process the command names in its own node process (migrate without DATABASE_URL stops with 78)', () => {
    const { status, stderr } = command(['migrate'], {});
    expect(status).toBe(78);
    expect(stderr).toContain('DATABASE_URL is required for migrate');
  });
});
