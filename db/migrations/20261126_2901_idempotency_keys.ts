import type { Knex } from 'knex';

/**
 * `Idempotency-Key` on the POSTs that create, reserve or sign. One row per (user, key):
 * inserted before the request runs (the primary key makes concurrent duplicates wait for, then
 * see, the first), completed with the response it answered, kept 24 hours. `claim` names the
 * request that holds an unfinished row, so only that request completes or releases it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('idempotency_keys', (t) => {
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('key').notNullable();
    // sha256 hex of method, path and the canonical JSON body: the same key with another request is refused.
    t.text('fingerprint').notNullable();
    t.uuid('claim').notNullable();
    // Null while the first request runs.
    t.integer('status_code');
    t.text('response_body');
    t.jsonb('response_headers');
    t.timestamp('started_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('completed_at', { useTz: true });
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['user_id', 'key']);
    t.index(['expires_at'], 'idempotency_keys_expires_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('idempotency_keys');
}
