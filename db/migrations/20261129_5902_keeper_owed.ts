import type { Knex } from 'knex';

/**
 * What the trade machine says the keeper owes, kept in the keeper's outbox from the moment it is
 * decided (status `owed`, in the same transaction as the trade's state), before any call data
 * exists: `not_before` / `not_after` bound the send in the target chain's own time (unix seconds,
 * judged against its latest block or ledger, never the wall clock), `delay_seconds` is the grace a
 * party has to send it itself, counted from `due_chain_time` (the chain's time when the keeper first
 * saw it owed). The account is null until a sender takes the send. A send no longer owed (a party sent it) is `cancelled`; one whose window closed before
 * it was sent is `expired`. `chain_events.sent_by` names who sent a trade's transaction.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE keeper_sends DROP CONSTRAINT keeper_sends_status');
  await knex.raw(`ALTER TABLE keeper_sends ADD CONSTRAINT keeper_sends_status
    CHECK (status IN ('owed', 'queued', 'sent', 'confirmed', 'reverted', 'failed', 'expired', 'cancelled'))`);
  await knex.schema.alterTable('keeper_sends', (t) => {
    // The account is the sender's that takes it first (the deciding process knows no keeper key).
    t.text('account').nullable().alter();
    t.text('to_address').nullable().alter();
    t.text('call_data').nullable().alter();
    t.bigInteger('not_before').notNullable().defaultTo(0);
    t.bigInteger('not_after');
    t.integer('delay_seconds').notNullable().defaultTo(0);
    t.bigInteger('due_chain_time');
    // When a final send was handed to the trade (verified like a party's confirmation): null until then.
    t.timestamp('reported_at', { useTz: true });
    // When it was given its call (due): the keeper's delay from due to sent is measured from here.
    t.timestamp('queued_at', { useTz: true });
  });
  await knex.raw(`ALTER TABLE keeper_sends ADD CONSTRAINT keeper_sends_call_when_queued
    CHECK (status IN ('owed', 'cancelled', 'expired') OR (to_address IS NOT NULL AND call_data IS NOT NULL))`);
  await knex.raw(`CREATE INDEX keeper_sends_owed ON keeper_sends (chain_id, id) WHERE status = 'owed'`);
  await knex.raw(`CREATE INDEX keeper_sends_unreported ON keeper_sends (id) WHERE status IN ('confirmed', 'reverted') AND reported_at IS NULL`);
  await knex.schema.alterTable('chain_events', (t) => {
    t.text('sent_by');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('chain_events', (t) => {
    t.dropColumn('sent_by');
  });
  await knex.raw('DROP INDEX keeper_sends_unreported');
  await knex.raw('DROP INDEX keeper_sends_owed');
  await knex.raw('ALTER TABLE keeper_sends DROP CONSTRAINT keeper_sends_call_when_queued');
  await knex.raw(`DELETE FROM keeper_sends WHERE status IN ('owed', 'expired', 'cancelled')`);
  await knex.schema.alterTable('keeper_sends', (t) => {
    t.dropColumn('queued_at');
    t.dropColumn('reported_at');
    t.dropColumn('due_chain_time');
    t.dropColumn('delay_seconds');
    t.dropColumn('not_after');
    t.dropColumn('not_before');
    t.text('to_address').notNullable().alter();
    t.text('call_data').notNullable().alter();
    t.text('account').notNullable().alter();
  });
  await knex.raw('ALTER TABLE keeper_sends DROP CONSTRAINT keeper_sends_status');
  await knex.raw(`ALTER TABLE keeper_sends ADD CONSTRAINT keeper_sends_status
    CHECK (status IN ('queued', 'sent', 'confirmed', 'reverted', 'failed'))`);
}
