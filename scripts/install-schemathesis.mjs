#!/usr/bin/env node
// Installs schemathesis (PyPI), pinned, into the git-ignored .tools/schemathesis/ for the API's
// property-based test (api/schemathesis.test.ts): `pip install --target`, no root, no virtualenv.
// Prints the directory to put on PYTHONPATH on its last line. A second run with the same pin does nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SCHEMATHESIS_VERSION = '4.32.5';

const root = fileURLToPath(new URL('..', import.meta.url));
export const SCHEMATHESIS_DIR = path.join(root, '.tools', 'schemathesis');
const stamp = path.join(SCHEMATHESIS_DIR, 'version');

function python() {
  for (const candidate of ['python3', 'python']) {
    if (spawnSync(candidate, ['-m', 'pip', '--version'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  throw new Error('installing schemathesis needs Python 3 with pip');
}

/** Installs the pinned schemathesis when missing; returns the directory for PYTHONPATH. */
export function installSchemathesis() {
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === SCHEMATHESIS_VERSION) return SCHEMATHESIS_DIR;
  rmSync(SCHEMATHESIS_DIR, { recursive: true, force: true });
  mkdirSync(SCHEMATHESIS_DIR, { recursive: true });
  const result = spawnSync(python(), ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--quiet',
    '--target', SCHEMATHESIS_DIR, `schemathesis==${SCHEMATHESIS_VERSION}`], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`pip install schemathesis==${SCHEMATHESIS_VERSION} failed:\n${result.stderr}`);
  writeFileSync(stamp, SCHEMATHESIS_VERSION);
  return SCHEMATHESIS_DIR;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(installSchemathesis());
}
