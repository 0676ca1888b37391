import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREDENTIALS_FILE, FORMER_PASSWORD, FORMER_SUPERUSER, SERVICE_ROLE } from './embedded-credentials.ts';
import { embeddedDatabaseUrl, startEmbeddedDatabase, type EmbeddedDatabase } from './embedded.ts';
import { createKnex, migrateToLatest } from './knex.ts';

/**
 * The embedded PostgreSQL's logins: random per data directory, and the service's role is no
 * superuser, so a local user who finds its password still cannot read the server's files (the
 * postmaster's /proc/<pid>/environ among them).
 */

let dir: string;
const clusters: EmbeddedDatabase[] = [];
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'relayer-embedded-db-'));
  // When run as root, PostgreSQL runs as `postgres` and must reach its directory.
  chmodSync(dir, 0o755);
});
afterAll(async () => {
  for (const cluster of clusters) await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Ports tried until one is free: other checkouts run PostgreSQL on this machine too. */
async function startCluster(name: string, persistent = false): Promise<EmbeddedDatabase> {
  for (let attempt = 1; ; attempt++) {
    try {
      const cluster = await startEmbeddedDatabase({ dataDir: path.join(dir, name), port: 40000 + Math.floor(Math.random() * 20000), persistent });
      clusters.push(cluster);
      return cluster;
    } catch (error) {
      if (!/could not create any TCP\/IP sockets|Address already in use/i.test(String(error)) || attempt >= 5) throw error;
    }
  }
}

const portOf = (url: string) => Number(new URL(url).port);
const withPassword = (url: string, user: string, password: string) => {
  const changed = new URL(url);
  changed.username = user;
  changed.password = password;
  return changed.toString();
};

/** The error a query fails with (or undefined when it succeeds), on a connection of its own. */
async function refusal(url: string, sql: string): Promise<string | undefined> {
  const knex = createKnex(url, 1);
  try {
    await knex.raw(sql);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await knex.destroy();
  }
}

describe('the embedded database', () => {
  it("connects the service as a role that is no superuser and cannot read /proc through the server, with a random password kept 0600 in the data directory", async () => {
    const [a, b] = [await startCluster('a'), await startCluster('b')];
    const credentials = path.join(a.dataDir, CREDENTIALS_FILE);
    expect(statSync(credentials).mode & 0o777).toBe(0o600);
    expect(statSync(credentials).uid).toBe(process.getuid!());
    expect(new URL(a.url).username).toBe(SERVICE_ROLE);
    // Random per directory: another cluster's password is another.
    expect(new URL(a.url).password).not.toBe(new URL(b.url).password);
    expect(new URL(a.adminUrl).password).not.toBe(new URL(b.adminUrl).password);
    // The address a tool finds for the running cluster is the service role's.
    expect(embeddedDatabaseUrl(path.join(dir, 'a'), portOf(a.url))).toBe(a.url);

    const knex = createKnex(a.url, 1);
    try {
      const role = (await knex.raw(`SELECT rolsuper, rolcreaterole, pg_has_role(current_user, 'pg_read_server_files', 'USAGE') AS reads_files
        FROM pg_roles WHERE rolname = current_user`)).rows[0];
      expect(role).toEqual({ rolsuper: false, rolcreaterole: false, reads_files: false });
    } finally {
      await knex.destroy();
    }
    const postmaster = readFileSync(path.join(a.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]!.trim();
    expect(await refusal(a.url, `SELECT pg_read_binary_file('/proc/${postmaster}/environ')`)).toMatch(/permission denied/);
    expect(await refusal(a.url, `SELECT pg_read_file('/proc/self/environ')`)).toMatch(/permission denied/);
    expect(await refusal(a.url, `COPY (SELECT 1) TO PROGRAM 'true'`)).toMatch(/permission denied|must be superuser/);
    // The superuser's password is no longer anything fixed.
    expect(await refusal(withPassword(a.adminUrl, FORMER_SUPERUSER, FORMER_PASSWORD), 'SELECT 1')).toMatch(/password authentication failed/);
  }, 120_000);

  it('migrates as the service role into a database it owns, and creates the per-test databases', async () => {
    const cluster = await startCluster('migrate');
    const admin = createKnex(cluster.url, 1);
    await admin.raw('CREATE DATABASE owned_by_service');
    await admin.destroy();
    const url = new URL(cluster.url);
    url.pathname = '/owned_by_service';
    const knex = createKnex(url.toString(), 2);
    try {
      await migrateToLatest(knex);
      expect((await knex.raw(`SELECT tableowner FROM pg_tables WHERE tablename = 'trades'`)).rows).toEqual([{ tableowner: SERVICE_ROLE }]);
    } finally {
      await knex.destroy();
    }
  }, 120_000);

  it('gives a data directory made with the former fixed superuser password new passwords and the service role, keeping its data', async () => {
    // A cluster as the former code left one: the service was the superuser `relayer` with one
    // fixed password, owned everything in `postgres`, and no credentials file existed.
    const first = await startCluster('former', true);
    const setup = createKnex(first.adminUrl, 1);
    await setup.raw(`CREATE ROLE ${FORMER_SUPERUSER} SUPERUSER LOGIN PASSWORD '${FORMER_PASSWORD}'`);
    await setup.raw(`ALTER DATABASE postgres OWNER TO ${FORMER_SUPERUSER}`);
    await setup.raw(`DROP ROLE ${SERVICE_ROLE}`);
    await setup.destroy();
    const former = createKnex(withPassword(first.adminUrl, FORMER_SUPERUSER, FORMER_PASSWORD), 2);
    try {
      await migrateToLatest(former);
      await former.raw(`CREATE SCHEMA kept; CREATE TYPE kept.mood AS ENUM ('calm'); CREATE TABLE kept.notes (id serial PRIMARY KEY, mood kept.mood, body text);
        CREATE FUNCTION kept.one() RETURNS int LANGUAGE sql AS 'SELECT 1'; INSERT INTO kept.notes (mood, body) VALUES ('calm', 'before')`);
    } finally {
      await former.destroy();
    }
    rmSync(path.join(first.dataDir, CREDENTIALS_FILE));
    await first.stop();

    const again = await startCluster('former', true);
    expect(new URL(again.adminUrl).username).toBe(FORMER_SUPERUSER);
    expect(statSync(path.join(again.dataDir, CREDENTIALS_FILE)).mode & 0o777).toBe(0o600);
    expect(await refusal(withPassword(again.adminUrl, FORMER_SUPERUSER, FORMER_PASSWORD), 'SELECT 1')).toMatch(/password authentication failed/);
    const knex = createKnex(again.url, 2);
    try {
      expect((await knex.raw('SELECT rolsuper FROM pg_roles WHERE rolname = current_user')).rows[0].rolsuper).toBe(false);
      expect((await knex.raw('SELECT body, kept.one() AS one FROM kept.notes')).rows).toEqual([{ body: 'before', one: 1 }]);
      // It owns what it must change: the schema's migrations, the tables, their sequences, the types.
      await migrateToLatest(knex);
      await knex.raw(`ALTER TABLE trades ADD COLUMN owner_check int; ALTER TYPE kept.mood ADD VALUE 'glad'; INSERT INTO kept.notes (mood, body) VALUES ('calm', 'after')`);
      await knex.raw('DROP SCHEMA kept CASCADE');
    } finally {
      await knex.destroy();
    }
  }, 180_000);
});
