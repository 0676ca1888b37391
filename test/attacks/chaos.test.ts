import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * The bounded fault suite (issue 24): `npm run chaos` (tools/chaos.ts) with few trades and a short
 * RPC outage, on each orchestrator. While the trades run it kills an API process, the worker (on
 * the embedded runner: the other API process) and a prover with SIGKILL, restarts PostgreSQL and
 * the Temporal server, and cuts the order chain's RPC; it exits 0 only when every trade ended as its
 * chain state says, nothing is open or waiting to start, the ad's books equal the AdManager's, each
 * chain event was recorded once, and the only 5xx answers were 503. The full run: CHAOS_TRADES=100.
 */

const root = new URL('../..', import.meta.url).pathname;

function chaos(orchestrator: 'temporal' | 'embedded'): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'tools/chaos.ts'], {
      cwd: root,
      env: { ...process.env, CHAOS_ORCHESTRATOR: orchestrator, CHAOS_TRADES: '8', CHAOS_LANES: '4', CHAOS_GAP_SECONDS: '5', CHAOS_RPC_OUTAGE_SECONDS: '10' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('trades under faults (npm run chaos, bounded)', () => {
  for (const orchestrator of ['temporal', 'embedded'] as const) {
    it(`on the ${orchestrator} orchestrator every trade ends as its chains say, the books balance, and the only 5xx are 503`, async () => {
      const { code, output } = await chaos(orchestrator);
      expect(output).toContain('All checks hold.');
      expect(code, output.slice(-4000)).toBe(0);
    }, 1_200_000);
  }
});
