#!/usr/bin/env node
// Installs Debian's SoftHSM2 (a PKCS#11 token in software) and opensc (pkcs11-tool) for the HSM
// signer tests (chains/signer/), when they are missing. The test setup runs this; `node
// scripts/install-softhsm.mjs` does it by hand. System packages: installed with apt-get (root), as
// scripts/install-browser.mjs installs chromium. Prints the PKCS#11 module's path on its last line.
// A second run does nothing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Debian's SoftHSM2 PKCS#11 library. */
export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';
const SOFTHSM_UTIL = '/usr/bin/softhsm2-util';

function aptGet(args) {
  // Another apt-get may hold dpkg's lock (other checkouts install their tools too): wait for it.
  return spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

/** Installs softhsm2 and opensc when SoftHSM2 is missing; returns the PKCS#11 module's path. */
export function installSoftHsm() {
  if (existsSync(SOFTHSM_MODULE) && existsSync(SOFTHSM_UTIL)) return SOFTHSM_MODULE;
  if (process.getuid?.() !== 0) {
    throw new Error(`${SOFTHSM_MODULE} is missing: the HSM signer tests need Debian's SoftHSM2 (run as root: apt-get install softhsm2 opensc)`);
  }
  const install = ['install', '-y', '-q', '--no-install-recommends', 'softhsm2', 'opensc'];
  let result = aptGet(install);
  if (result.status !== 0) {
    // Empty or stale package lists (a fresh image): refresh once, then retry.
    aptGet(['update', '-qq']);
    result = aptGet(install);
  }
  if (result.status !== 0 || !existsSync(SOFTHSM_MODULE)) {
    throw new Error(`apt-get install softhsm2 opensc failed (exit ${result.status}):\n${result.stderr}`);
  }
  return SOFTHSM_MODULE;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(installSoftHsm());
}
