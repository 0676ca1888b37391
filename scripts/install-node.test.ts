import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error a plain .mjs script without types
import { NODE_MIN_MAJOR, NODE_PIN } from './install-node.mjs';

const root = path.resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

describe('Node 24 LTS for the suite (scripts/install-node.mjs)', () => {
  it('runs a command on Node 24 or newer whatever the machine has (the pinned release where it is older)', () => {
    // The machine's node runs the script, as `npm test` does; the command it runs sees Node >= 24.
    const run = spawnSync('node', ['scripts/install-node.mjs', 'node', '-p', 'process.versions.node'], { cwd: root, encoding: 'utf8', timeout: 300_000 });
    expect(run.stderr).not.toMatch(/Error/);
    expect(run.status).toBe(0);
    const version = run.stdout.trim();
    expect(Number(version.split('.')[0])).toBeGreaterThanOrEqual(NODE_MIN_MAJOR);
    if (Number(process.versions.node.split('.')[0]) < NODE_MIN_MAJOR) expect(version).toBe(NODE_PIN.version);
  }, 300_000);

  it('starts every package script that runs a process, through scripts/node24.sh, which npm\'s shell hands the process to (exec)', () => {
    // Scripts that start no Node process of ours: npm itself re-entered on Node 24, cargo, the installer that must run on any Node, the install-time build.
    const exempt = new Set(['test', 'test:suite', 'typecheck', 'build:native', 'build:signer', 'temporal:install', 'prepare']);
    for (const [name, script] of Object.entries(pkg.scripts as Record<string, string>)) {
      if (exempt.has(name)) continue;
      expect(script, name).toMatch(/^exec (env [A-Z_]+=\S+ )?sh scripts\/node24\.sh (node|tsx|vitest) /);
    }
    // With the machine's Node first on PATH the command sees Node 24 or newer; its exit status is the script's.
    const machinePath = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => !dir.includes(`${path.sep}.tools${path.sep}node${path.sep}`)).join(path.delimiter);
    const run = spawnSync('sh', ['scripts/node24.sh', 'node', '-e', 'console.log(process.versions.node); process.exit(3)'], { cwd: root, encoding: 'utf8', env: { PATH: machinePath }, timeout: 300_000 });
    expect(run.status).toBe(3);
    expect(Number(run.stdout.trim().split('.')[0])).toBeGreaterThanOrEqual(NODE_MIN_MAJOR);
  }, 300_000);

  it('is what the README test command, CI and engines go through', () => {
    expect(pkg.engines.node).toBe(`>=${NODE_MIN_MAJOR}`);
    expect(pkg.scripts.test).toMatch(/^node scripts\/install-node\.mjs npm run /);
    const ci = readFileSync(path.join(root, '.ci/run'), 'utf8');
    expect(ci).toMatch(/PATH="\$\(node scripts\/install-node\.mjs\):\$PATH"[\s\S]*npm ci[\s\S]*npm test/);
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    expect(readme).toContain('npm ci && npm test');
  });
});
