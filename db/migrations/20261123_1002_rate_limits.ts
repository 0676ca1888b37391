import type { Knex } from 'knex';

/**
 * Rate-limit counters shared by every API replica (the sign-in budget): one row per budget and
 * client key, in the layout rate-limiter-flexible's Postgres limiter reads and writes (`expire` is
 * epoch milliseconds). Expired rows are deleted by the scheduled purge.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('rate_limits', (t) => {
    t.string('key', 255).primary();
    t.integer('points').notNullable().defaultTo(0);
    t.bigInteger('expire').index('rate_limits_expire_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('rate_limits');
}
