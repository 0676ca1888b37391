import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/sequencer.ts';

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
