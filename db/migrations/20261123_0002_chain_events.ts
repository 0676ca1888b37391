import type { Knex } from 'knex';

/**
 * Every contract event the service accepted as proof of something, under its unique key
 * (chain, transaction, log index): one event answers one request, whatever the endpoint. The
 * block hash is kept so that anything that depends on the event can re-check that its block is
 * still canonical before the relayer signs on it. Chains need at least one confirmation.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('chain_events', (t) => {
    t.bigIncrements('id');
    t.text('chain_id').notNullable();
    t.text('tx_hash').notNullable();
    t.integer('log_index').notNullable();
    t.text('block').notNullable();
    t.text('block_hash').notNullable();
    t.text('event').notNullable();
    // What the event answered: an ad request or a trade step.
    t.text('subject_kind').notNullable().checkIn(['ad_request', 'trade'], 'chain_events_subject_kind_check');
    t.uuid('subject_id').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['chain_id', 'tx_hash', 'log_index']);
    t.index(['subject_kind', 'subject_id']);
  });
  await knex.raw('UPDATE chains SET confirmations = 1 WHERE confirmations < 1');
  await knex.raw('ALTER TABLE chains DROP CONSTRAINT chains_confirmations_check');
  await knex.raw('ALTER TABLE chains ADD CONSTRAINT chains_confirmations_check CHECK (confirmations >= 1)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE chains DROP CONSTRAINT chains_confirmations_check');
  await knex.raw('ALTER TABLE chains ADD CONSTRAINT chains_confirmations_check CHECK (confirmations >= 0)');
  await knex.schema.dropTable('chain_events');
}
