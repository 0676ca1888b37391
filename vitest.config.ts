import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**', '.data/**'],
    globalSetup: ['test/global-setup.ts'],
    // Child processes, not threads: the prover's worker threads and snarkjs need a real main thread.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
