import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { cruise, type ICruiseResult } from 'dependency-cruiser';

const rules = createRequire(import.meta.url)('../.dependency-cruiser.cjs');
const root = new URL('..', import.meta.url);
const IGNORED = new Set(['node_modules', '.data', '.git', 'target']);

describe('the import rules of the README', () => {
  it('hold for every top-level folder: one direction, no cycles', async () => {
    const entries = readdirSync(root, { withFileTypes: true })
      .filter((e) => (e.isDirectory() && !IGNORED.has(e.name) && !e.name.startsWith('.')) || (e.isFile() && /\.ts$/.test(e.name)))
      .map((e) => e.name);
    const cwd = process.cwd();
    process.chdir(root.pathname);
    let result: ICruiseResult;
    try {
      result = (await cruise(entries, { ruleSet: rules, ...rules.options, validate: true })).output as ICruiseResult;
    } finally {
      process.chdir(cwd);
    }
    const violations = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (cycle ${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`);
    expect(violations).toEqual([]);
    // Not vacuous: the whole tree was read, the service's modules included.
    expect(result.summary.totalCruised).toBeGreaterThan(150);
    expect(result.modules.some((m) => m.source === 'entrypoints/container.ts')).toBe(true);
  });
});
