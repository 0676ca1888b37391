import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;

describe('the secret settings held out of process.env (entrypoints/hold-secrets.mjs)', () => {
  it('keeps them from every child the process starts while its config still reads them', () => {
    // What the process sees, and what a child it starts with the default environment (as tsx's esbuild service is) sees.
    const script = `
      const { processSettings } = await import('./config/held-secrets.ts');
      const { execFileSync } = await import('node:child_process');
      const child = execFileSync(process.execPath, ['-e', 'console.log(process.env.JWT_SECRET ?? "unset")'], { encoding: 'utf8' }).trim();
      console.log(JSON.stringify({ env: process.env.JWT_SECRET ?? 'unset', config: processSettings().JWT_SECRET, child, port: process.env.PORT }));`;
    const run = spawnSync(process.execPath, ['--import', './entrypoints/hold-secrets.mjs', '--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH, JWT_SECRET: 'held-jwt-secret-value', PORT: '4321' },
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual({ env: 'unset', config: 'held-jwt-secret-value', child: 'unset', port: '4321' });
  }, 60_000);
});
