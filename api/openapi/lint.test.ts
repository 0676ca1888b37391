import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.ts';

/**
 * The served OpenAPI document linted by two tools nobody here wrote: Redocly's `recommended`
 * rules (api/openapi/redocly.yaml) and Spectral's `spectral:oas` (api/openapi/spectral.yaml).
 * Zero errors; every warning that remains is one of these, each with its reason, and none of them
 * is stale.
 */
export const EXPLAINED_WARNINGS: Readonly<Record<string, string>> = {
  'redocly:info-license': 'No licence has been chosen for this service (package.json is private and names none); the owner adds info.license when one is.',
  'redocly:operation-2xx-response': 'GET / only redirects (302) to the docs (and later the app), so it has no 2xx by design; Spectral\'s operation-success-response, which accepts a 3xx, still holds every operation to a success response.',
  'spectral:info-contact': 'No public support contact exists yet; the operator adds info.contact for a deployment that has one.',
};

const run = promisify(execFile);
const bin = (name: string) => path.join(import.meta.dirname, '..', '..', 'node_modules', '.bin', name);

/** Runs a linter that exits non-zero when it finds errors; its JSON report is on stdout either way. */
async function lint(command: string, args: string[]): Promise<string> {
  try {
    return (await run(command, args, { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1', REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } })).stdout;
  } catch (error) {
    const stdout = (error as { stdout?: string }).stdout;
    if (stdout) return stdout;
    throw error;
  }
}

describe('the OpenAPI document, linted', () => {
  let service: TestService;
  let dir: string;
  let file: string;
  beforeAll(async () => {
    service = await startTestService();
    dir = mkdtempSync(path.join(tmpdir(), 'relayer-openapi-lint-'));
    file = path.join(dir, 'openapi.json');
    writeFileSync(file, await (await service.request('/openapi.json')).text());
  });
  afterAll(async () => {
    await service?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('has no Redocly error (recommended rules) and only explained warnings', async () => {
    const report = JSON.parse(await lint(bin('redocly'), ['lint', '--config', path.join(import.meta.dirname, 'redocly.yaml'), '--format', 'json', file])) as {
      problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
    };
    const errors = report.problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    expect(errors).toEqual([]);
    const warnings = new Set(report.problems.map((p) => `redocly:${p.ruleId}`));
    expect([...warnings].filter((rule) => !(rule in EXPLAINED_WARNINGS))).toEqual([]);
    expect(Object.keys(EXPLAINED_WARNINGS).filter((rule) => rule.startsWith('redocly:') && !warnings.has(rule))).toEqual([]);
  });

  it('has no Spectral error (spectral:oas) and only explained warnings', async () => {
    const report = JSON.parse(await lint(bin('spectral'), ['lint', '--ruleset', path.join(import.meta.dirname, 'spectral.yaml'), '--format', 'json', '--quiet', file])) as {
      code: string; severity: number; message: string; path: string[];
    }[];
    // Spectral severities: 0 error, 1 warning, 2 information, 3 hint.
    const errors = report.filter((p) => p.severity === 0).map((p) => `${p.code} at ${p.path.join('.')}: ${p.message}`);
    expect(errors).toEqual([]);
    const warnings = new Set(report.filter((p) => p.severity === 1).map((p) => `spectral:${p.code}`));
    expect([...warnings].filter((rule) => !(rule in EXPLAINED_WARNINGS))).toEqual([]);
    expect(Object.keys(EXPLAINED_WARNINGS).filter((rule) => rule.startsWith('spectral:') && !warnings.has(rule))).toEqual([]);
  });

  it('names every operation, marks public ones public and leaves the filters of "Try it out" empty', async () => {
    const document = await (await service.request('/openapi.json')).json();
    const operations = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([route, item]) => Object.entries(item).map(([method, op]) => ({ route, method, op })));
    const ids = operations.map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { route, method, op } of operations) {
      expect(op.security, `${method} ${route}`).toBeDefined();
      if (op.requestBody) expect(op.requestBody.required, `${method} ${route}`).toBe(true);
      for (const parameter of op.parameters ?? []) {
        if (parameter.in === 'query' && !parameter.required) expect(parameter.schema.example ?? parameter.example, `${route} ${parameter.name}`).toBeUndefined();
      }
    }
    expect(document.paths['/v1/ads'].get.security).toEqual([{}, { bearerAuth: [] }]);
    expect(document.paths['/v1/chains'].get.security).toEqual([]);
    expect(document.paths['/v1/ads/create'].post.security).toEqual([{ bearerAuth: [] }]);
    expect(document.paths['/v1/ads'].get.responses['304']).toBeDefined();
    expect(document.paths['/v1/ads/create'].post.responses['415']).toBeDefined();
  });
});
