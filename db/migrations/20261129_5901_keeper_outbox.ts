import type { Knex } from 'knex';

/**
 * The keeper's outbox. `keeper_accounts`: one row per (chain, account), the next nonce the database
 * hands out and the lease of the one sender allowed at a time (`lease_token` grows with every new
 * holder: the fencing token every write of a sender checks). `keeper_sends`: what is owed, unique on
 * its business key (trade, action, side), with the nonce it was given and its outcome.
 * `keeper_attempts`: every signed transaction of a send (a replacement is one more, same nonce), kept
 * before it is broadcast so a restarted sender can broadcast it again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('keeper_accounts', (t) => {
    t.text('chain_id').notNullable();
    t.text('account').notNullable();
    t.bigInteger('next_nonce');
    t.text('lease_owner');
    t.bigInteger('lease_token').notNullable().defaultTo(0);
    t.timestamp('lease_expires_at', { useTz: true });
    t.primary(['chain_id', 'account']);
  });
  await knex.schema.createTable('keeper_sends', (t) => {
    t.bigIncrements('id').primary();
    t.text('chain_id').notNullable();
    t.text('account').notNullable();
    t.text('trade_id').notNullable();
    t.text('action').notNullable();
    t.text('side').notNullable();
    t.text('to_address').notNullable();
    t.text('call_data').notNullable();
    t.specificType('value', 'NUMERIC(78,0)').notNullable().defaultTo(0);
    t.bigInteger('nonce');
    t.specificType('gas_limit', 'NUMERIC(78,0)');
    t.text('status').notNullable().defaultTo('queued');
    t.text('tx_hash');
    t.bigInteger('block_number');
    t.text('block_hash');
    t.text('last_error');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('sent_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.unique(['trade_id', 'action', 'side'], { indexName: 'keeper_sends_business_key' });
    t.unique(['chain_id', 'account', 'nonce'], { indexName: 'keeper_sends_nonce' });
  });
  await knex.raw(`ALTER TABLE keeper_sends ADD CONSTRAINT keeper_sends_status
    CHECK (status IN ('queued', 'sent', 'confirmed', 'reverted', 'failed'))`);
  await knex.raw(`CREATE INDEX keeper_sends_open ON keeper_sends (chain_id, account, id) WHERE status IN ('queued', 'sent')`);
  await knex.schema.createTable('keeper_attempts', (t) => {
    t.bigIncrements('id').primary();
    t.bigInteger('send_id').notNullable().references('id').inTable('keeper_sends').onDelete('CASCADE');
    t.text('tx_hash').notNullable().unique();
    t.text('raw').notNullable();
    t.specificType('max_fee_per_gas', 'NUMERIC(78,0)').notNullable();
    t.specificType('max_priority_fee_per_gas', 'NUMERIC(78,0)').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('broadcast_at', { useTz: true });
    t.index(['send_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('keeper_attempts');
  await knex.schema.dropTable('keeper_sends');
  await knex.schema.dropTable('keeper_accounts');
}
