import type { Knex } from 'knex';

/**
 * The operator's controls (operator/): `operator_switches`, one row per switch the api processes obey
 * (`signing_stopped`: every signed response refused while engaged), and `operator_actions`, the audit of
 * every control used: who, when, why, on what. Rows of the audit are never updated or deleted.
 * `operator_ad_holds`: the ads the operator paused (the status they had, to give back on resume); while a
 * hold exists the Maker cannot set the ad ACTIVE.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('operator_switches', (t) => {
    t.text('name').primary();
    t.boolean('engaged').notNullable().defaultTo(false);
    t.timestamp('changed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.text('changed_by');
    t.text('reason');
  });
  await knex('operator_switches').insert({ name: 'signing_stopped', engaged: false });
  await knex.schema.createTable('operator_actions', (t) => {
    t.bigIncrements('id');
    t.text('action').notNullable();
    t.text('subject');
    t.text('actor').notNullable();
    t.text('reason').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['created_at']);
  });
  await knex.schema.createTable('operator_ad_holds', (t) => {
    t.uuid('ad_id').primary().references('ads.id').onDelete('CASCADE');
    t.text('previous_status').notNullable();
    t.text('actor').notNullable();
    t.text('reason').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('operator_ad_holds');
  await knex.schema.dropTable('operator_actions');
  await knex.schema.dropTable('operator_switches');
}
