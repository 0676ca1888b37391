#!/usr/bin/env node
// Installs podman-compose, pinned, from PyPI into the git-ignored .tools/podman-compose/ (pip
// --target; its dependencies PyYAML and python-dotenv come along), with a wrapper that runs it:
//   .tools/podman-compose/podman-compose   (PYTHONPATH set, then python3 -m podman_compose)
// deploy/compose.test.ts runs this when it is missing; usable by hand: `node scripts/install-podman-compose.mjs`.
// A second run with the same pin does nothing. Prints the wrapper's path on its last line.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** 1.6.0 with Debian's podman 4.3: `depends_on: condition: service_healthy` is not honoured (deploy/README.md says how the test brings services up). */
export const PODMAN_COMPOSE_VERSION = '1.6.0';

const root = fileURLToPath(new URL('..', import.meta.url));
const DIR = path.join(root, '.tools', 'podman-compose');
export const PODMAN_COMPOSE = path.join(DIR, 'podman-compose');
const stamp = path.join(DIR, 'version');

function python() {
  for (const candidate of ['python3', 'python']) {
    if (spawnSync(candidate, ['-m', 'pip', '--version'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  throw new Error('installing podman-compose needs Python 3 with pip');
}

/** Installs the pinned podman-compose unless it is there; returns the wrapper's path. */
export function ensurePodmanCompose() {
  if (existsSync(PODMAN_COMPOSE) && existsSync(stamp) && readFileSync(stamp, 'utf8') === PODMAN_COMPOSE_VERSION) return PODMAN_COMPOSE;
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(path.join(DIR, 'pypi'), { recursive: true });
  // The real path: .tools may be a symlink to a checkout shared by several worktrees.
  const pypi = realpathSync(path.join(DIR, 'pypi'));
  const python3 = python();
  const result = spawnSync(python3, ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--quiet', '--target', pypi, `podman-compose==${PODMAN_COMPOSE_VERSION}`], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`pip install podman-compose==${PODMAN_COMPOSE_VERSION} failed:\n${result.stdout}${result.stderr}`);
  writeFileSync(PODMAN_COMPOSE, `#!/bin/sh\nPYTHONPATH='${pypi}' exec ${python3} -m podman_compose "$@"\n`, { mode: 0o755 });
  writeFileSync(stamp, PODMAN_COMPOSE_VERSION);
  return PODMAN_COMPOSE;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  console.log(ensurePodmanCompose());
}
