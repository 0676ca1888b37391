import type { Knex } from 'knex';

/** Chains, tokens and routes: the registry operators import with `npm run registry -- import FILE`. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('chains', (t) => {
    t.uuid('id').primary().defaultTo(knex.fn.uuid());
    t.text('name').notNullable();
    t.text('chain_id').notNullable().unique();
    t.text('kind').notNullable().checkIn(['EVM', 'STELLAR'], 'chains_kind_check');
    t.text('ad_manager_address').notNullable();
    t.text('order_portal_address').notNullable();
    // Never shown by the API: where the service reads the chain and how deep a transaction must be.
    t.text('rpc_url');
    t.integer('confirmations').notNullable().defaultTo(1);
    t.text('network_passphrase');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['name']);
  });
  await knex.raw(`ALTER TABLE chains ADD CONSTRAINT chains_chain_id_numeric CHECK (chain_id ~ '^[0-9]{1,78}$')`);
  await knex.raw(`ALTER TABLE chains ADD CONSTRAINT chains_confirmations_check CHECK (confirmations >= 0)`);

  await knex.schema.createTable('tokens', (t) => {
    t.uuid('id').primary().defaultTo(knex.fn.uuid());
    t.uuid('chain_id').notNullable().references('chains.id').onDelete('RESTRICT');
    t.text('symbol').notNullable();
    t.text('name').notNullable();
    t.text('address').notNullable();
    t.integer('decimals').notNullable();
    t.text('kind').notNullable().checkIn(['NATIVE', 'ERC20', 'SEP41'], 'tokens_kind_check');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['chain_id', 'address']);
    t.index(['symbol']);
  });
  await knex.raw(`ALTER TABLE tokens ADD CONSTRAINT tokens_decimals_range CHECK (decimals BETWEEN 0 AND 255)`);

  await knex.schema.createTable('routes', (t) => {
    t.uuid('id').primary().defaultTo(knex.fn.uuid());
    t.uuid('ad_token_id').notNullable().references('tokens.id').onDelete('RESTRICT');
    t.uuid('order_token_id').notNullable().references('tokens.id').onDelete('RESTRICT');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['ad_token_id', 'order_token_id']);
    t.index(['order_token_id']);
    t.index(['created_at', 'id']);
  });
  await knex.raw(`ALTER TABLE routes ADD CONSTRAINT routes_distinct_tokens CHECK (ad_token_id <> order_token_id)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('routes');
  await knex.schema.dropTable('tokens');
  await knex.schema.dropTable('chains');
}
