import type { Knex } from 'knex';

/**
 * So the books audit cannot be starved, each phase of the audit (ad requests, open trades, ad
 * balances) reads at most a budget of subjects per run, in id order; where a phase stopped short is
 * kept here, so the next run, in whichever process, continues after `after_id` instead of reading
 * the same first page again. NULL: the next run starts a new pass from the first id.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_cursors', (t) => {
    t.text('phase').primary().checkIn(['requests', 'trades', 'ad-balances'], 'audit_cursors_phase_check');
    t.uuid('after_id');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  // The sweeps read their subjects in id order under their filter: one index range scan per page,
  // however many settled requests and finished trades the tables hold.
  await knex.raw(`CREATE INDEX ad_requests_unsettled_idx ON ad_requests (id) WHERE status IN ('PENDING', 'EXECUTED')`);
  await knex.raw(`CREATE INDEX trades_open_id_idx ON trades (id) WHERE status IN ('PENDING', 'DEPOSITED', 'LOCKED')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX trades_open_id_idx');
  await knex.raw('DROP INDEX ad_requests_unsettled_idx');
  await knex.schema.dropTable('audit_cursors');
}
