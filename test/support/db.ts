import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { inject } from 'vitest';
import { dropDatabase } from '../../db/drop-database.ts';
import { createKnex, migrateToLatest } from '../../db/knex.ts';

export interface TestDatabase {
  knex: Knex;
  url: string;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

/** A fresh, fully migrated database of its own for one test file (call in `beforeAll`). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('postgresAdminUrl');
  const name = `test_${randomBytes(6).toString('hex')}`;
  const admin = createKnex(adminUrl, 1);
  await admin.raw(`CREATE DATABASE ${name}`);
  await admin.destroy();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const knex = createKnex(url.toString(), 5);
  await migrateToLatest(knex);
  return {
    knex,
    url: url.toString(),
    async drop() {
      await knex.destroy();
      const cleanup = createKnex(adminUrl, 1);
      await dropDatabase(cleanup, name);
      await cleanup.destroy();
    },
  };
}
