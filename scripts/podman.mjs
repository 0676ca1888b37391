#!/usr/bin/env node
// Podman for the image checks: installed from Debian when missing (root: apt-get), and always run
// with the containers.conf below (written into the git-ignored .tools/podman/), never the host's.
// The settings are what Debian's podman 4.3 needs on our CI machines:
//   runtime "runc"           crun 1.8 refuses their hybrid cgroup layout
//   cgroup_manager cgroupfs  no systemd to manage cgroups
//   events_logger "file"     no journald
//   default_ulimits          podman's default nofile (1048576) exceeds the machines' hard limit, and
//                            raising it needs CAP_SYS_RESOURCE: containers get the host's hard limit;
//                            nproc no more than 32768 (measured: runc could not set it higher there,
//                            "error setting rlimit type 6", though the hard limit reads 96365)
// Images and layers live in podman's own storage (/var/lib/containers as root), so they are cached
// across runs and clones on one machine; a fresh machine builds them.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const PODMAN_DIR = path.join(root, '.tools', 'podman');
export const CONTAINERS_CONF = path.join(PODMAN_DIR, 'containers.conf');

/**
 * Debian packages the checks need: podman and its runtime, debootstrap for the stand-in bases, and
 * for the compose stack catatonit (`init: true`) and the CNI dnsname plugin (services find each
 * other by name on the project's network).
 */
const DEBIAN_PACKAGES = ['podman', 'runc', 'containernetworking-plugins', 'iptables', 'debootstrap', 'catatonit', 'golang-github-containernetworking-plugin-dnsname'];

const NPROC_CEILING = 32768;

function hardLimit(resource) {
  const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith(resource));
  const hard = line?.trim().split(/\s{2,}/)[2];
  return hard && hard !== 'unlimited' ? hard : undefined;
}

function containersConf() {
  const nofile = hardLimit('Max open files');
  const nprocHard = hardLimit('Max processes');
  const nproc = String(Math.min(Number(nprocHard ?? NPROC_CEILING), NPROC_CEILING));
  const ulimits = [nofile && `"nofile=${nofile}:${nofile}"`, nproc && `"nproc=${nproc}:${nproc}"`].filter(Boolean);
  return [
    '# Written by scripts/podman.mjs; see there why.',
    '[containers]',
    `default_ulimits = [${ulimits.join(', ')}]`,
    '[engine]',
    'runtime = "runc"',
    'cgroup_manager = "cgroupfs"',
    'events_logger = "file"',
    '',
  ].join('\n');
}

function which(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** Installs podman (and debootstrap) from Debian when missing; needs root then. */
export function ensurePodmanInstalled() {
  const missing = DEBIAN_PACKAGES.filter((pkg) => spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' }).stdout !== 'install ok installed');
  if (missing.length === 0 && which('podman')) return;
  if (process.getuid?.() !== 0) {
    throw new Error(`the image checks need podman and debootstrap (Debian: apt-get install ${missing.join(' ')}); run them as root or install these first`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // image.test.ts and compose.test.ts may both get here at once on a fresh machine: the second apt-get waits for dpkg's lock.
  const install = ['-o', 'DPkg::Lock::Timeout=600', 'install', '-y', '-qq', '--no-install-recommends', ...missing];
  let result = spawnSync('apt-get', install, { env, encoding: 'utf8' });
  if (result.status !== 0) {
    // Empty or stale package lists (a fresh machine): refresh them once, then retry.
    spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', 'update', '-qq'], { env, stdio: 'ignore' });
    result = spawnSync('apt-get', install, { env, encoding: 'utf8' });
  }
  if (result.status !== 0) throw new Error(`apt-get install ${missing.join(' ')} failed:\n${result.stdout}${result.stderr}`);
}

/** Writes .tools/podman/containers.conf; returns the environment every podman call runs with. */
export function podmanEnv() {
  mkdirSync(PODMAN_DIR, { recursive: true });
  writeFileSync(CONTAINERS_CONF, containersConf());
  return { ...process.env, CONTAINERS_CONF };
}

/** Runs podman with our containers.conf; throws with its output when it fails (unless `allowFailure`). */
export function podman(args, options = {}) {
  const { allowFailure = false, ...spawnOptions } = options;
  const result = spawnSync('podman', args, { env: podmanEnv(), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'], ...spawnOptions });
  if (result.error) throw result.error;
  if (result.status !== 0 && !allowFailure) {
    throw new Error(`podman ${args.join(' ')} failed (exit ${result.status}):\n${(result.stdout ?? '').slice(-4000)}${(result.stderr ?? '').slice(-4000)}`);
  }
  return { status: result.status ?? -1, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

/** True when podman's storage holds `image`. */
export function imageExists(image) {
  return podman(['image', 'exists', image], { allowFailure: true }).status === 0;
}
