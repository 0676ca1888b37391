import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import config, { LongestFirstSequencer } from '../vitest.config.ts';

const ROOT = path.join(import.meta.dirname, '..');

/** A vitest context with a results cache holding `cached` (file -> ms) and no file stats. */
function sequencer(cached: Record<string, number> = {}) {
  const ctx = {
    config: { root: ROOT },
    cache: {
      getFileTestResults: (key: string) => {
        const file = key.slice(key.indexOf(':') + 1);
        return file in cached ? { duration: cached[file]!, failed: false } : undefined;
      },
      getFileStats: () => undefined,
    },
  } as unknown as Vitest;
  return new LongestFirstSequencer(ctx);
}

const project = { name: '', config: { sequence: { groupOrder: 0 }, isolate: true } };
const spec = (file: string) => ({ moduleId: path.join(ROOT, file), project }) as unknown as TestSpecification;
const files = (specs: TestSpecification[]) => specs.map((s) => path.relative(ROOT, s.moduleId));

describe('test run order and parallelism (CI time)', () => {
  it('starts the longest files first, by the measured table, unknown (short) files last in their given order', async () => {
    const given = ['api/errors-a.test.ts', 'test/trades/trades-evm.test.ts', 'api/errors-b.test.ts', 'circuits/ceremony/ceremony.test.ts', 'test/attacks/chaos.test.ts'];
    expect(files(await sequencer().sort(given.map(spec)))).toEqual([
      'circuits/ceremony/ceremony.test.ts', 'test/attacks/chaos.test.ts', 'test/trades/trades-evm.test.ts', 'api/errors-a.test.ts', 'api/errors-b.test.ts',
    ]);
  });

  it("prefers this checkout's own previous run (vitest's results cache) over the table", async () => {
    const given = ['test/attacks/chaos.test.ts', 'api/quick.test.ts'];
    expect(files(await sequencer({ 'api/quick.test.ts': 500_000 }).sort(given.map(spec)))).toEqual(['api/quick.test.ts', 'test/attacks/chaos.test.ts']);
  });

  it('runs several files at once on a 2-core machine, longest first (vitest alone would run one file at a time there)', () => {
    const test = (config as { test: { maxWorkers?: number; sequence?: { sequencer?: unknown } } }).test;
    expect(test.maxWorkers).toBeGreaterThanOrEqual(3);
    expect(test.sequence?.sequencer).toBe(LongestFirstSequencer);
  });
});
