#!/usr/bin/env node
// The test setup's cold cargo builds, started early: .ci/run runs this in the background before
// `npm ci` and the typecheck, which need no Rust, so on a fresh clone the builds (the setup's floor,
// minutes of both cores) are already under way when vitest's global setup asks for them; its own
// cargo calls then wait on cargo's lock and find everything fresh. Plain Node, no dependency: it runs
// before node_modules exists. A failure here is only reported: the global setup builds again and
// fails the run loudly.
//
// The commands must stay exactly those of test/global-setup.ts (package.json build:native and
// build:signer, devnet/stellar/build.ts STELLAR_WASM_BUILD and STELLAR_DEVNET_BUILD): other flags or
// another target directory would make a second build, not a head start. test/sequencer.test.ts
// checks they are equal.
//
//   node scripts/prebuild-cargo.mjs     prints `prebuild: <what> <seconds> s` per chain on stderr
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** devnet/stellar/build.ts's WASM_TARGET_DIR: this checkout's own target directory for the wasm. */
const wasmTargetDir = path.join('target', 'wasm', createHash('sha256').update(realpathSync(root)).digest('hex').slice(0, 12));

/** The builds, as chains of cargo argument lists run in turn (the chains side by side). */
export const CARGO_CHAINS = {
  'native prover': [['build', '--profile', 'prover', '--locked', '--target-dir', 'target', '-p', 'relayer-prover-native']],
  'soroban wasm': [['build', '--locked', '--release', '--target-dir', wasmTargetDir, '--target', 'wasm32v1-none',
    '-p', 'relayer-soroban-ad-manager', '-p', 'relayer-soroban-order-portal', '-p', 'relayer-soroban-test-token']],
  'pkcs11 signer + stellar devnet': [
    ['build', '--profile', 'devnet', '--locked', '--target-dir', 'target', '-p', 'relayer-pkcs11-signer'],
    ['build', '--locked', '--profile', 'devnet', '--target-dir', 'target', '-p', 'relayer-stellar-devnet'],
  ],
};

function cargo(args) {
  return new Promise((resolve) => {
    const child = spawn('cargo', args, { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (chunk) => { err = (err + chunk).slice(-4000); });
    child.on('error', (error) => resolve(`cargo could not start: ${error.message}`));
    child.on('close', (code) => resolve(code === 0 ? undefined : `cargo ${args.join(' ')} exited ${code}: ${err.trim().split('\n').slice(-5).join(' | ')}`));
  });
}

async function main() {
  const started = Date.now();
  // The pinned toolchain with its wasm target (devnet/stellar/build.ts ensureRustToolchain does the same).
  const targets = spawnSync('rustup', ['target', 'list', '--installed'], { cwd: root, encoding: 'utf8' });
  if (targets.status !== 0 || !targets.stdout.split('\n').some((line) => line.trim() === 'wasm32v1-none')) {
    spawnSync('rustup', ['toolchain', 'install', '--no-self-update'], { cwd: root, stdio: 'ignore' });
  }
  await Promise.all(Object.entries(CARGO_CHAINS).map(async ([what, chain]) => {
    const t0 = Date.now();
    for (const args of chain) {
      const failure = await cargo(args);
      if (failure) {
        process.stderr.write(`prebuild: ${what} failed (the test setup builds it again): ${failure}\n`);
        return;
      }
    }
    process.stderr.write(`prebuild: ${what} ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  }));
  process.stderr.write(`prebuild: done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
