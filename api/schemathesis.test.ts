import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAd, insertRouteWithChains, insertTrade } from '../test/support/fixtures.ts';
import { startTestService, type TestService } from '../test/support/service.ts';
import { call } from '../test/support/wallets.ts';

/**
 * Schemathesis (PyPI, pinned by scripts/install-schemathesis.mjs into .tools/schemathesis) generates
 * requests from the served OpenAPI document, valid and invalid, for every operation, with a real
 * Bearer token, and checks each answer: no 5xx, no status the document does not list for the
 * operation, no content type or body outside the documented ones. Bounded: a fixed seed, a few
 * examples per operation. Left out: POST /v1/auth/logout (it would end the session the run uses)
 * and GET /v1/events, whose answer to the run's valid token is a stream that stays open until the
 * token expires (test/trades-pushed.test.ts). GET /v1/trades/{id}/events is in: the ids the run
 * makes up name no trade, so it answers at once (404, 422), as documented.
 * It runs in a directory of its own: schemathesis keeps a cache of past failures (`.schemathesis/`)
 * in its working directory and replays them first, which would make a run depend on the last one.
 */

const run = promisify(execFile);
const EXCLUDED_OPERATIONS = ['logout', 'streamEvents'];

describe('schemathesis over the OpenAPI document', () => {
  let service: TestService;
  let token: string;
  let workDir: string;
  beforeAll(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), 'relayer-schemathesis-'));
    service = await startTestService();
    const wallet = Wallet.createRandom();
    const challenge = await call(service, 'POST', '/v1/auth/challenge', { address: wallet.address, chainKind: 'EVM' });
    const login = await call(service, 'POST', '/v1/auth/login', { chainKind: 'EVM', message: challenge.body.message, signature: await wallet.signMessage(challenge.body.message) });
    token = login.body.tokens.access;
    // Some rows to find: an ad and a trade against it, of other wallets (their chains have no RPC: an
    // action that reached a chain would answer the documented 503, which schemathesis counts as a server error).
    const route = await insertRouteWithChains(service.knex);
    const adId = await insertAd(service.knex, route);
    await insertTrade(service.knex, route, adId);
  });
  afterAll(async () => {
    await service?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('finds no server error, no undocumented status and no response outside its schema', async () => {
    const pythonPath = path.join(import.meta.dirname, '..', '.tools', 'schemathesis');
    const args = [
      path.join(pythonPath, 'bin', 'st'), 'run', `${service.url}/openapi.json`,
      '--checks', 'not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance',
      // One worker: two threads parsing lambdas at once trip CPython 3.11's AST recursion check inside hypothesis.
      '--phases', 'examples,coverage,fuzzing', '--max-examples', '5', '--seed', '20261124', '--workers', '1',
      '--generation-database', 'none', '--request-timeout', '10', '--no-color', '--continue-on-failure', '--warnings', 'off',
      '-H', `Authorization: Bearer ${token}`,
      ...EXCLUDED_OPERATIONS.flatMap((id) => ['--exclude-operation-id', id]),
    ];
    let output: string;
    try {
      const result = await run('python3', args, { cwd: workDir, env: { ...process.env, PYTHONPATH: pythonPath, SCHEMATHESIS_HOOKS: '' }, maxBuffer: 64 * 1024 * 1024 });
      output = result.stdout;
    } catch (error) {
      const failed = error as { stdout?: string; stderr?: string };
      expect.fail(`schemathesis found problems:\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`);
    }
    expect(output).toMatch(/No issues found/i);
    // The run's own summary (operations, phases, cases) in the test log, for the record.
    console.log(output.slice(output.indexOf('SUMMARY')));
  }, 300_000);
});
