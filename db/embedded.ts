import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { childEnv } from '../config/child-env.ts';
import {
  clusterUrl, FORMER_SUPERUSER, newCredentials, readCredentials, writeCredentials, type EmbeddedCredentials,
} from './embedded-credentials.ts';
import { secureEmbeddedCluster } from './embedded-roles.ts';
import { binariesReachableByOthers, postgresBinaries, reachableByOthers } from './postgres-binaries.ts';

/** A running embedded PostgreSQL and the URLs of its `postgres` database. */
export interface EmbeddedDatabase {
  /** As the service's role: no superuser, no server files; owns the `postgres` database (and may create others). */
  url: string;
  /** As the cluster's superuser: for administering the cluster itself (an online backup), never for the service. */
  adminUrl: string;
  /** Where the cluster lives (differs from the requested one only when run as root, see below). */
  dataDir: string;
  stop(): Promise<void>;
}

export interface EmbeddedDatabaseOptions {
  dataDir: string;
  port: number;
  /** Keep the data directory when stopping (the embedded service run); tests throw theirs away. */
  persistent: boolean;
  onLog?: (line: string) => void;
}

/** The superuser initdb makes in a new cluster (clusters made before the credentials file have `relayer`). */
const SUPERUSER = 'postgres';

/**
 * The service-role URL of the embedded cluster the service keeps in `dataDir` (DATA_DIR/pg) on
 * `port`, read from its credentials file; undefined when there is no cluster with one there yet.
 */
export function embeddedDatabaseUrl(dataDir: string, port: number): string | undefined {
  const credentials = readCredentials(clusterDir(dataDir, process.getuid?.() === 0));
  return credentials && clusterUrl(port, credentials.role, credentials.password);
}

interface RunAs {
  uid: number;
  gid: number;
}

/**
 * PostgreSQL refuses to run as root. As root, run it as the `postgres` system user (created when
 * missing); otherwise as ourselves.
 */
function postgresUser(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('groupadd', ['-f', 'postgres']);
    execFileSync('useradd', ['-g', 'postgres', '-M', '-s', '/usr/sbin/nologin', 'postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
}

/**
 * Where the cluster can live. As root, the `postgres` user must be able to reach it; when the
 * requested directory sits below one it cannot enter (a checkout made with `mktemp -d`, say),
 * the cluster goes to a directory derived from the requested path under /var/tmp, the same one on
 * every start, so data still survives restarts.
 */
function clusterDir(requested: string, asRoot: boolean): string {
  const absolute = path.resolve(requested);
  if (!asRoot || reachableByOthers(absolute)) return absolute;
  const base = existsSync('/var/tmp') ? '/var/tmp' : tmpdir();
  return path.join(base, `relayer-pg-${createHash('sha256').update(absolute).digest('hex').slice(0, 16)}`);
}

function run(binary: string, args: string[], runAs: RunAs | undefined): ChildProcess {
  // PostgreSQL needs nothing of this process's environment but the base set (the C locale forced).
  return spawn(binary, args, { ...runAs, stdio: ['ignore', 'pipe', 'pipe'], env: childEnv({ LC_ALL: 'C' }) });
}

async function initialise(initdb: string, dataDir: string, runAs: RunAs | undefined, password: string, onLog: (line: string) => void): Promise<void> {
  // Parents with the default mode: 0700 on them (what `recursive` with a mode gives) would lock the postgres user out.
  mkdirSync(path.dirname(dataDir), { recursive: true });
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (runAs) chownSync(dataDir, runAs.uid, runAs.gid);
  const passwordFile = path.join(tmpdir(), `relayer-pg-password-${process.pid}-${Date.now()}`);
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (runAs) chownSync(passwordFile, runAs.uid, runAs.gid);
  try {
    const child = run(initdb, [
      `--pgdata=${dataDir}`, '--auth=scram-sha-256', `--username=${SUPERUSER}`, `--pwfile=${passwordFile}`,
      '--encoding=UTF8', '--locale=C',
    ], runAs);
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => onLog(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString(); onLog(chunk.toString()); });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', resolve);
    });
    if (code !== 0) throw new Error(`initdb failed (exit ${code}): ${output.slice(-2000)}`);
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

function waitUntilReady(child: ChildProcess, onLog: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      onLog(text);
      output += text;
      if (output.includes('database system is ready to accept connections')) {
        child.off('exit', onExit);
        resolve();
      }
    };
    const onExit = (code: number | null) => reject(new Error(`PostgreSQL exited (code ${code}) before accepting connections:\n${output.slice(-2000)}`));
    child.stderr?.on('data', onData);
    child.stdout?.on('data', (chunk: Buffer) => onLog(chunk.toString()));
    child.once('exit', onExit);
    child.once('error', reject);
  });
}

/**
 * Starts a real PostgreSQL from npm's binaries, listening on loopback TCP only. Initialises the
 * cluster on first use of its directory and reuses it afterwards, so the embedded service keeps
 * its data across restarts. Its passwords are random per directory, kept in the directory
 * (relayer-credentials.json, 0600); `url` logs in as a role that is no superuser and cannot read
 * the server's files. A directory made before the credentials file (one fixed password, the
 * service as superuser) is given new passwords and the service's role on its first start here.
 * The server stops with `stop()` or when this process exits.
 */
export async function startEmbeddedDatabase(options: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  const onLog = options.onLog ?? (() => {});
  const runAs = postgresUser();
  let binaries = await postgresBinaries();
  if (runAs) binaries = binariesReachableByOthers(binaries);
  const dataDir = clusterDir(options.dataDir, runAs !== undefined);
  let credentials: EmbeddedCredentials;
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    credentials = newCredentials(SUPERUSER);
    await initialise(binaries.initdb, dataDir, runAs, credentials.superuserPassword, onLog);
    writeCredentials(dataDir, credentials);
  } else {
    const kept = readCredentials(dataDir);
    // Written before the cluster changes: a start cut short in between finds the file and finishes the change.
    credentials = kept ?? newCredentials(FORMER_SUPERUSER);
    if (!kept) writeCredentials(dataDir, credentials);
  }

  const child = run(binaries.postgres, [
    '-D', dataDir, '-p', String(options.port),
    // No socket directory: nothing to create that the postgres user might not be able to write.
    '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=300',
  ], runAs);
  // A parent that exits without stop() (a crash, a killed test run) must not leave PostgreSQL behind.
  const stopOnExit = () => child.kill('SIGINT');
  process.once('exit', stopOnExit);
  child.once('exit', () => process.off('exit', stopOnExit));
  await waitUntilReady(child, onLog);
  try {
    await secureEmbeddedCluster(options.port, credentials);
  } catch (error) {
    child.kill('SIGINT');
    throw error;
  }

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= new Promise<void>((resolve) => {
      const done = () => {
        if (!options.persistent) rmSync(dataDir, { recursive: true, force: true });
        resolve();
      };
      if (child.exitCode !== null || child.signalCode !== null) return done();
      // SIGINT is PostgreSQL's "fast" shutdown: roll back open transactions, checkpoint, exit.
      const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.once('exit', () => {
        clearTimeout(force);
        done();
      });
      child.kill('SIGINT');
    }));
  return {
    url: clusterUrl(options.port, credentials.role, credentials.password),
    adminUrl: clusterUrl(options.port, credentials.superuser, credentials.superuserPassword),
    dataDir,
    stop,
  };
}
