#!/usr/bin/env node
// Builds deploy/Dockerfile with podman on the locally made stand-ins of its pinned bases
// (scripts/image-standins.mjs), as the image checks do. Podman is installed from Debian when missing.
//   node scripts/build-image.mjs [tag]          default tag localhost/relayer:dev
// Layers are cached in podman's storage: a rebuild after a source change redoes only what follows
// the changed COPY. The machine's CA bundle is handed to the build as a secret (the package
// registries are reached through a TLS-intercepting proxy here); it never lands in a layer.
// Prints one JSON line: {image, seconds, sizeBytes, buildArgs}; podman's output goes to
// .tools/podman/last-build.log. One build at a time on a machine: a second caller (image.test.ts and
// compose.test.ts start together) waits for the first, then finds every layer cached.
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureStandins } from './image-standins.mjs';
import { ensurePodmanInstalled, PODMAN_DIR, podman } from './podman.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

const LOCK = path.join(PODMAN_DIR, 'build.lock');

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Runs `build` holding .tools/podman/build.lock (a directory naming its holder's pid; a dead holder's lock is taken over). */
function withBuildLock(build, log) {
  mkdirSync(PODMAN_DIR, { recursive: true });
  for (let waited = false; ;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(path.join(LOCK, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const pidFile = path.join(LOCK, 'pid');
      const holder = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8') || 0) : 0;
      // A dead holder, or one that never wrote its pid (it died right after mkdir) a minute on.
      if (holder ? !alive(holder) : Date.now() - (statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? 0) > 60_000) {
        rmSync(LOCK, { recursive: true, force: true });
        continue;
      }
      if (!waited) log(`another image build (pid ${holder || '?'}) is running: waiting for it`);
      waited = true;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1_000);
    }
  }
  try {
    return build();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/**
 * This checkout's cargo target directory and this machine's cargo home, mounted into the image's
 * Rust stages (the target where they build, /app/target; the home at its own path, named to the stage
 * by CARGO_HOME_DIR), unless RELAYER_IMAGE_OWN_CARGO_BUILD=1. The stages run the package scripts' own
 * cargo commands with the same compiler (the rust stand-in copies this machine's pinned toolchain) on
 * the same sources, and cargo keys a dependency's build on its compiler, flags and the path of its
 * sources: so it finds what the test setup built fresh and compiles nothing again, where a cold build
 * of the prover and the signer costs minutes of both cores. Whatever differs (a changed source, another
 * compiler) cargo rebuilds there as it would anywhere. The binaries reach the image through the
 * stages' /out, since a mount is not kept in a layer.
 */
function reusedCargoBuilds() {
  if (process.env.RELAYER_IMAGE_OWN_CARGO_BUILD === '1') return undefined;
  const target = path.join(root, 'target');
  const cargoHome = process.env.CARGO_HOME || path.join(homedir(), '.cargo');
  if (!existsSync(target) || !existsSync(cargoHome)) return undefined;
  return { target: realpathSync(target), cargoHome: realpathSync(cargoHome) };
}

/** Builds the image (tag `image`); returns how long it took and how large it is. */
export function buildImage(image = 'localhost/relayer:dev', log = () => {}) {
  return withBuildLock(() => buildUnlocked(image, log), log);
}

function buildUnlocked(image, log) {
  const started = Date.now();
  ensurePodmanInstalled();
  const buildArgs = ensureStandins(log);
  const args = ['build', '--pull=never', '--layers', '-f', path.join(root, 'deploy', 'Dockerfile'), '-t', image];
  for (const [name, value] of Object.entries(buildArgs)) args.push('--build-arg', `${name}=${value}`);
  if (existsSync(CA_BUNDLE)) args.push('--secret', `id=ca-certificates,src=${CA_BUNDLE}`);
  const reused = reusedCargoBuilds();
  if (reused) {
    args.push('--volume', `${reused.target}:/app/target`, '--volume', `${reused.cargoHome}:${reused.cargoHome}`);
    args.push('--build-arg', `CARGO_HOME_DIR=${reused.cargoHome}`);
  }
  log(`podman ${args.join(' ')} .`);
  const { stdout, stderr } = podman([...args, root], { stdio: ['ignore', 'pipe', 'pipe'] });
  // Which steps ran and which came from the cache ("--> Using cache"), for whoever wonders why a build took long.
  writeFileSync(path.join(PODMAN_DIR, 'last-build.log'), `${stdout}${stderr}`);
  const sizeBytes = Number(podman(['image', 'inspect', '--format', '{{.Size}}', image]).stdout.trim());
  return { image, seconds: (Date.now() - started) / 1000, sizeBytes, buildArgs };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  console.log(JSON.stringify(buildImage(process.argv[2], (line) => console.error(line))));
}
