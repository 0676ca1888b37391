import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { migrationSource } from './migrations/index.ts';

// numeric (1700) must never become a JS number: amounts stay decimal strings end to end.
// int8 (20) counts are safe as numbers here (row counts), so parse them.
pg.types.setTypeParser(20, (value) => Number.parseInt(value, 10));

/** A knex instance on PostgreSQL. The caller owns it and calls `destroy()`. */
export function createKnex(url: string, poolMax = 10): Knex {
  return knexFactory({
    client: 'pg',
    connection: url,
    pool: { min: 0, max: poolMax },
    migrations: { migrationSource },
  });
}

/** Brings the schema to the latest migration (idempotent; safe with several processes, knex locks). */
export async function migrateToLatest(knex: Knex): Promise<void> {
  await knex.migrate.latest();
}

/** Resolves once the database answers a trivial query (health checks, probes); rejects otherwise. */
export async function ping(knex: Knex): Promise<void> {
  await knex.raw('select 1');
}
