import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The embedded cluster's two logins: its superuser (the cluster's administration only) and the
 * role the service connects as (no superuser, owns the `postgres` database and what is in it).
 */
export interface EmbeddedCredentials {
  superuser: string;
  superuserPassword: string;
  role: string;
  password: string;
}

/** The file, in the cluster's own directory (a copy of the directory is a working cluster), readable by its owner only. */
export const CREDENTIALS_FILE = 'relayer-credentials.json';

/** The role the service connects as. */
export const SERVICE_ROLE = 'relayer_service';

/**
 * The superuser and its password of clusters made before the credentials file existed: every
 * such cluster had this one, so a start that finds no file tries it once, then replaces it.
 */
export const FORMER_SUPERUSER = 'relayer';
export const FORMER_PASSWORD = 'embedded-local-only';

/** Fresh random passwords (hex: nothing in them needs quoting in SQL or a URL). */
export function newCredentials(superuser: string): EmbeddedCredentials {
  return { superuser, superuserPassword: randomBytes(24).toString('hex'), role: SERVICE_ROLE, password: randomBytes(24).toString('hex') };
}

/** The credentials kept in `dataDir`, or undefined when it has none (a cluster made before them). */
export function readCredentials(dataDir: string): EmbeddedCredentials | undefined {
  const file = path.join(dataDir, CREDENTIALS_FILE);
  if (!existsSync(file)) return undefined;
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<EmbeddedCredentials>;
  for (const key of ['superuser', 'superuserPassword', 'role', 'password'] as const) {
    if (typeof parsed[key] !== 'string' || !/^[a-z0-9_]+$/.test(parsed[key])) throw new Error(`${file}: ${key} is missing or not [a-z0-9_]+`);
  }
  return parsed as EmbeddedCredentials;
}

/** Writes the credentials into `dataDir` (mode 0600, owned by this process's user), replacing any in one rename. */
export function writeCredentials(dataDir: string, credentials: EmbeddedCredentials): void {
  const file = path.join(dataDir, CREDENTIALS_FILE);
  const staging = `${file}.${process.pid}`;
  writeFileSync(staging, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  renameSync(staging, file);
}

/** A URL of the cluster on loopback `port` for `user`, database `postgres`. */
export function clusterUrl(port: number, user: string, password: string): string {
  return `postgres://${user}:${password}@127.0.0.1:${port}/postgres`;
}
