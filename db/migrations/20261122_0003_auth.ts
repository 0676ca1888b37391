import type { Knex } from 'knex';

/**
 * Wallet sign-in. A user is only an id that wallets hang off: at most one wallet per chain kind,
 * and an address belongs to one user. Challenges are single use (`used_at`) and expire.
 * A session is one sign-in: its refresh tokens form a family, stored as SHA-256 hashes only;
 * revoking the session (on refresh-token reuse) ends every token of the family.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary().defaultTo(knex.fn.uuid());
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('wallets', (t) => {
    t.uuid('id').primary().defaultTo(knex.fn.uuid());
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('chain_kind').notNullable().checkIn(['EVM', 'STELLAR'], 'wallets_chain_kind_check');
    // Canonical spelling (EIP-55 / G-strkey), so equality is identity.
    t.text('address').notNullable().unique('wallets_address_unique');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['user_id', 'chain_kind'], { indexName: 'wallets_user_chain_kind_unique' });
  });

  await knex.schema.createTable('auth_challenges', (t) => {
    t.uuid('id').primary().defaultTo(knex.fn.uuid());
    t.text('chain_kind').notNullable().checkIn(['EVM', 'STELLAR'], 'auth_challenges_chain_kind_check');
    t.text('address').notNullable();
    // EVM: the SIWE nonce. Stellar: the hex hash of the challenge transaction (signatures excluded).
    t.text('nonce').notNullable().unique('auth_challenges_nonce_unique');
    // EVM: the exact SIWE text issued. Stellar: the server-signed XDR issued.
    t.text('message').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable().index('auth_challenges_expires_at_idx');
    t.timestamp('used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('sessions', (t) => {
    t.uuid('id').primary().defaultTo(knex.fn.uuid());
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE').index('sessions_user_id_idx');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true });
    t.text('revoked_reason');
  });

  await knex.schema.createTable('refresh_tokens', (t) => {
    // The token's `jti`.
    t.uuid('id').primary();
    // The family: every token rotated out of one sign-in shares its session.
    t.uuid('session_id').notNullable().references('sessions.id').onDelete('CASCADE').index('refresh_tokens_session_id_idx');
    t.text('token_hash').notNullable().unique('refresh_tokens_token_hash_unique');
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('rotated_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('refresh_tokens');
  await knex.schema.dropTable('sessions');
  await knex.schema.dropTable('auth_challenges');
  await knex.schema.dropTable('wallets');
  await knex.schema.dropTable('users');
}
