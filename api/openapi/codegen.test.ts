import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestService, type TestService } from '../../test/support/service.ts';

const run = promisify(execFile);

/** What `go` needs and nothing else (no secret of the test's environment reaches the child). */
function goEnv(): NodeJS.ProcessEnv {
  const modules = path.join(path.dirname(path.dirname(inject('oapiCodegen'))), 'gopath');
  return {
    PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: tmpdir(), GOFLAGS: '-mod=mod',
    GOPATH: modules, GOMODCACHE: path.join(modules, 'pkg', 'mod'), GOCACHE: path.join(modules, '..', 'cache'),
    ...(process.env.GOPROXY ? { GOPROXY: process.env.GOPROXY } : {}),
  };
}

/**
 * The OpenAPI 3.0 document (/docs/openapi-3.0.json) is what integrators feed to generators that read
 * only 3.0. Two of the most used, pinned (scripts/install-codegen.mjs), generate from it: Go's
 * oapi-codegen, whose output then compiles, and openapi-python-client, whose models then parse an
 * error body carrying a code added after the document was generated.
 */
describe('the OpenAPI 3.0 document, through client generators', () => {
  let service: TestService;
  let dir: string;
  let file: string;
  let document: { openapi: string; components: { schemas: Record<string, { properties?: Record<string, unknown> }> } };
  beforeAll(async () => {
    service = await startTestService();
    dir = mkdtempSync(path.join(tmpdir(), 'relayer-codegen-'));
    file = path.join(dir, 'openapi-3.0.json');
    const response = await service.request('/docs/openapi-3.0.json');
    expect(response.status).toBe(200);
    const text = await response.text();
    writeFileSync(file, text);
    document = JSON.parse(text);
  });
  afterAll(async () => {
    await service?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is OpenAPI 3.0 with no 3.1-only spelling left', () => {
    expect(document.openapi).toBe('3.0.3');
    const text = JSON.stringify(document);
    expect(text).not.toMatch(/"type":\s*\[/);
    expect(text).not.toMatch(/"type":\s*"null"/);
    expect(text).not.toMatch(/"const":/);
    expect(document).not.toHaveProperty('webhooks');
  });

  it('oapi-codegen generates a Go client that compiles', async () => {
    const module = path.join(dir, 'go');
    mkdirSync(module);
    // -response-type-suffix: the document names response bodies CreateAdResponse, ..., the names
    // oapi-codegen gives its own per-operation wrappers by default (docs/compatibility.md).
    const { stdout } = await run(inject('oapiCodegen'), ['-generate', 'types,client', '-response-type-suffix', 'Result', '-package', 'relayer', file], {
      maxBuffer: 64 * 1024 * 1024, env: goEnv(),
    });
    writeFileSync(path.join(module, 'client.go'), stdout);
    writeFileSync(path.join(module, 'go.mod'), 'module example.com/relayer\n\ngo 1.24\n\nrequire github.com/oapi-codegen/runtime v1.9.0\n');
    await run('go', ['mod', 'tidy'], { cwd: module, env: goEnv() });
    await run('go', ['build', './...'], { cwd: module, env: goEnv() });
  }, 300_000);

  it('openapi-python-client generates a Python client whose models take a code added later', async () => {
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: tmpdir(), PYTHONPATH: inject('openapiPythonClient') };
    const out = path.join(dir, 'py');
    // No post-generation hooks: they run ruff, which is a formatter, not part of generating.
    const config = path.join(dir, 'openapi-python-client.yaml');
    writeFileSync(config, 'post_hooks: []\n');
    const generated = await run('python3', ['-m', 'openapi_python_client', 'generate', '--path', file, '--output-path', out, '--overwrite', '--config', config], { env });
    // Warnings mean parts of the document were skipped: none may be.
    expect(generated.stdout + generated.stderr).not.toMatch(/Warning\(s\) encountered/);
    const [pkg] = readdirSync(out).filter((name) => name.endsWith('_api_client'));
    expect(pkg).toBeDefined();
    const script = [
      `from ${pkg}.models.error import Error`,
      'known = Error.from_dict({"statusCode": 409, "message": "m", "error": "Conflict", "code": "NOT_FINAL", "retryable": True})',
      'later = Error.from_dict({"statusCode": 409, "message": "m", "error": "Conflict", "code": "A_CODE_ADDED_LATER", "retryable": False})',
      'print(getattr(known.code, "value", known.code), later.code, known.retryable, later.retryable)',
    ].join('\n');
    const parsed = await run('python3', ['-c', script], { cwd: out, env: { ...env, PYTHONPATH: `${out}:${inject('openapiPythonClient')}` } });
    expect(parsed.stdout.trim()).toBe('NOT_FINAL A_CODE_ADDED_LATER True False');
  }, 120_000);
});
