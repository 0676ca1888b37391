#!/usr/bin/env node
// Installs Debian's `chromium` for the browser tests (a page on another origin calling the API, CORS)
// when it is missing. The test setup runs this; `node scripts/install-browser.mjs` does it by hand.
// Chromium is a system package with many shared libraries: it is installed with apt-get (root), not
// unpacked into .tools/. When it is missing and we are not root, this fails saying what to run.
// Prints the browser's path on its last line. A second run does nothing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';

function aptGet(args) {
  // Another apt-get may hold dpkg's lock (other checkouts install their tools too): wait for it.
  return spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

/** Installs chromium when /usr/bin/chromium is missing; returns its path. */
export function installBrowser() {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0) {
    throw new Error(`${CHROMIUM} is missing: the browser tests need Debian's chromium (run as root: apt-get install chromium)`);
  }
  let result = aptGet(['install', '-y', '-q', '--no-install-recommends', 'chromium']);
  if (result.status !== 0) {
    // Empty or stale package lists (a fresh image): refresh once, then retry.
    aptGet(['update', '-qq']);
    result = aptGet(['install', '-y', '-q', '--no-install-recommends', 'chromium']);
  }
  if (result.status !== 0 || !existsSync(CHROMIUM)) {
    throw new Error(`apt-get install chromium failed (exit ${result.status}):\n${result.stderr}`);
  }
  return CHROMIUM;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(installBrowser());
}
