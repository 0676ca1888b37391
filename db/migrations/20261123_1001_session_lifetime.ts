import type { Knex } from 'knex';

/**
 * Sessions get an absolute end (`expires_at`, set at sign-in from SESSION_MAX_AGE_SECONDS): no
 * refresh outlives it. Sessions opened before this migration end 30 days after they began (the
 * default). Indexes serve the scheduled purge of expired sessions and refresh tokens.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sessions', (t) => {
    t.timestamp('expires_at', { useTz: true });
  });
  await knex.raw(`UPDATE sessions SET expires_at = created_at + interval '30 days'`);
  await knex.raw(`ALTER TABLE sessions ALTER COLUMN expires_at SET NOT NULL`);
  await knex.schema.alterTable('sessions', (t) => {
    t.index(['expires_at'], 'sessions_expires_at_idx');
  });
  await knex.schema.alterTable('refresh_tokens', (t) => {
    t.index(['expires_at'], 'refresh_tokens_expires_at_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('refresh_tokens', (t) => {
    t.dropIndex(['expires_at'], 'refresh_tokens_expires_at_idx');
  });
  await knex.schema.alterTable('sessions', (t) => {
    t.dropIndex(['expires_at'], 'sessions_expires_at_idx');
    t.dropColumn('expires_at');
  });
}
