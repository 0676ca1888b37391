#!/usr/bin/env node
// Installs the two client generators integrators use most, pinned, into the git-ignored
// .tools/codegen/ for the OpenAPI 3.0 document's test (api/openapi/codegen.test.ts):
// - Go's oapi-codegen, by `go install` of a pinned module version (GOBIN in .tools, its module and
//   build caches beside it, so nothing lands in the user's Go folders);
// - Python's openapi-python-client, by `pip install --target`, no root, no virtualenv.
// Prints a JSON object `{ oapiCodegen, pythonPath }` on its last line. A second run with the same
// pins does nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const OAPI_CODEGEN_VERSION = 'v2.8.2';
export const OPENAPI_PYTHON_CLIENT_VERSION = '0.29.1';

const root = fileURLToPath(new URL('..', import.meta.url));
export const CODEGEN_DIR = path.join(root, '.tools', 'codegen');
const GO_DIR = path.join(CODEGEN_DIR, 'go');
const PYTHON_DIR = path.join(CODEGEN_DIR, 'python');

/** Only what `go` and `pip` need: never the caller's secrets. */
function toolEnv(extra) {
  const keep = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'GOPROXY', 'GOFLAGS', 'GOTOOLCHAIN', 'PIP_INDEX_URL', 'PIP_CERT', 'SSL_CERT_FILE'];
  const env = {};
  for (const name of keep) if (process.env[name] !== undefined) env[name] = process.env[name];
  return { ...env, ...extra };
}

function installed(dir, version) {
  const stamp = path.join(dir, 'version');
  return existsSync(stamp) && readFileSync(stamp, 'utf8') === version;
}

function run(command, args, env, what) {
  const result = spawnSync(command, args, { encoding: 'utf8', env });
  if (result.error) throw new Error(`${what}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${what} failed:\n${result.stderr}`);
}

/** The pinned oapi-codegen binary, installed when missing. */
export function installOapiCodegen() {
  const binary = path.join(GO_DIR, 'bin', 'oapi-codegen');
  if (installed(GO_DIR, OAPI_CODEGEN_VERSION) && existsSync(binary)) return binary;
  rmSync(GO_DIR, { recursive: true, force: true });
  mkdirSync(GO_DIR, { recursive: true });
  run('go', ['install', `github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@${OAPI_CODEGEN_VERSION}`], toolEnv({
    GOBIN: path.join(GO_DIR, 'bin'),
    GOPATH: path.join(GO_DIR, 'gopath'),
    GOCACHE: path.join(GO_DIR, 'cache'),
    GOMODCACHE: path.join(GO_DIR, 'gopath', 'pkg', 'mod'),
  }), `go install oapi-codegen@${OAPI_CODEGEN_VERSION}`);
  // Go writes its module cache read-only; the stamp says the install is whole.
  writeFileSync(path.join(GO_DIR, 'version'), OAPI_CODEGEN_VERSION);
  return binary;
}

function python() {
  for (const candidate of ['python3', 'python']) {
    if (spawnSync(candidate, ['-m', 'pip', '--version'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  throw new Error('installing openapi-python-client needs Python 3 with pip');
}

/** The pinned openapi-python-client, installed when missing; returns the directory for PYTHONPATH. */
export function installOpenapiPythonClient() {
  if (installed(PYTHON_DIR, OPENAPI_PYTHON_CLIENT_VERSION)) return PYTHON_DIR;
  rmSync(PYTHON_DIR, { recursive: true, force: true });
  mkdirSync(PYTHON_DIR, { recursive: true });
  run(python(), ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--quiet', '--target', PYTHON_DIR,
    `openapi-python-client==${OPENAPI_PYTHON_CLIENT_VERSION}`], toolEnv({}), `pip install openapi-python-client==${OPENAPI_PYTHON_CLIENT_VERSION}`);
  writeFileSync(path.join(PYTHON_DIR, 'version'), OPENAPI_PYTHON_CLIENT_VERSION);
  return PYTHON_DIR;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify({ oapiCodegen: installOapiCodegen(), pythonPath: installOpenapiPythonClient() }));
}
