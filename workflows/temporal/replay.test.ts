import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { bundleTradeWorkflows } from './worker.ts';

// Histories recorded from real runs (workflows.test.ts and test/trades/trades-evm.test.ts with
// RECORD_HISTORIES=1, i.e. `npm run temporal:histories`), one folder per workflow version
// (workflows/README.md "Versioning"): v1 before the outbox (FOLLOW_UPS_PATCH), v2 after it, v3 the lean
// workflow (LEAN_PATCH), v4 its start delayed to the reservation's expiry (DELAYED_START_PATCH). Every
// version still open in a deployment replays against today's workflow code: a change that would
// make a running trade's workflow non-deterministic fails here, before it reaches a deployment.
const HISTORIES = path.join(import.meta.dirname, 'histories');
const VERSIONS = ['v1', 'v2', 'v3', 'v4'];

describe.each(VERSIONS)('recorded trade workflow histories (%s)', (version) => {
  it('replay deterministically with the current workflow code', async () => {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
    const folder = path.join(HISTORIES, version);
    const files = readdirSync(folder).filter((f) => f.endsWith('.json')).sort();
    expect(files.length).toBeGreaterThanOrEqual(5);
    const histories = files.map((f) => ({ workflowId: f.replace(/\.json$/, ''), history: JSON.parse(readFileSync(path.join(folder, f), 'utf8')) }));
    const workflowBundle = await bundleTradeWorkflows();
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories({ workflowBundle }, histories)) {
      replayed += 1;
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(files.length);
  }, 120_000);
});
