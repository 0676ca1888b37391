import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * Seconds each slow test file took in a full run (test/durations.json, files of 5 s or more; the
 * ceremony's with its cold phase 1 and Soroban build, which a fresh clone pays).
 */
const MEASURED: Record<string, number> = JSON.parse(readFileSync(new URL('./test/durations.json', import.meta.url), 'utf8'));

/**
 * Longest test files first, so that with several workers the run does not end on one long file
 * started last (a fresh clone's ceremony alone is about 9 minutes). A file's expected time is its
 * duration in vitest's own results cache (a previous run in this checkout) when there is one, else
 * the measured figure in test/durations.json, else 0 (short files last, in vitest's order).
 * Sharding is vitest's own.
 */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const root = this.ctx.config.root;
    const expected = (spec: TestSpecification): number => {
      const file = relative(root, spec.moduleId).split('\\').join('/');
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`);
      return cached ? cached.duration / 1000 : (MEASURED[file] ?? 0);
    };
    const order = new Map(base.map((spec, index) => [spec, index]));
    return [...base].sort((a, b) => expected(b) - expected(a) || order.get(a)! - order.get(b)!);
  }
}

/**
 * Test files run at once. Most files spend their time waiting on devnets, Temporal, PostgreSQL and
 * timers, not on a core: one worker per core beyond the first (vitest's default, so 1 on 2 cores) ran
 * 1,704 s of files one after another while the suite used 0.6 of the 2 cores. TEST_WORKERS overrides it.
 */
const WORKERS = Number(process.env.TEST_WORKERS ?? Math.max(3, availableParallelism() + 1));

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**', '.data/**'],
    globalSetup: ['test/global-setup.ts'],
    // Child processes, not threads: the prover's worker threads and snarkjs need a real main thread.
    pool: 'forks',
    maxWorkers: WORKERS,
    // Longest files first (test/durations.json), so no long file starts last.
    sequence: { sequencer: LongestFirstSequencer },
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
