import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chainKindBranches } from '../tools/chain-kind-branches.ts';

const root = new URL('..', import.meta.url).pathname;

describe('chain kinds live in their adapters', () => {
  it('no code outside chains/<kind>/ compares a chain kind', () => {
    expect(chainKindBranches(root)).toEqual([]);
  });

  it('reports a planted comparison in each spelling, and none inside a kind folder or a test', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'planted-kinds-'));
    const files: Record<string, string> = {
      'trades/a.ts': "export const a = (kind: string) => kind === 'EVM';\n",
      'api/b.ts': "export const b = (kind: string) => 'STELLAR' !== kind;\n",
      'auth/c.ts': "export function c(kind: string) {\n  switch (kind) {\n    case 'EVM': return 1;\n  }\n  return 0;\n}\n",
      'chains/d.ts': "export const d = (k: string) => k == 'STELLAR';\n",
      'chains/evm/e.ts': "export const e = (kind: string) => kind === 'EVM';\n",
      'trades/f.test.ts': "export const f = (kind: string) => kind === 'EVM';\n",
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    try {
      const found = chainKindBranches(dir).map((line) => line.split(':').slice(0, 2).join(':')).sort();
      expect(found).toEqual(['api/b.ts:1', 'auth/c.ts:3', 'chains/d.ts:1', 'trades/a.ts:1']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
