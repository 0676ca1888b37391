import type { Knex } from 'knex';

/**
 * The start outbox: a trade's intent to have its lifecycle started, written in the same transaction
 * as its reservation. The row goes once the orchestrator has the trade (its workflow started, its
 * timer armed); a row that stays is started by the reconciler (trades/start-reconciler.ts), so a
 * committed reservation always gets its expiry timer. `next_attempt_at` is the claim: a
 * reconciler moves it forward before it tries, so two reconcilers do not try the same row at once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('trade_starts', (t) => {
    t.uuid('trade_id').primary().references('id').inTable('trades').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('next_attempt_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('last_error');
    t.index(['next_attempt_at'], 'trade_starts_due_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('trade_starts');
}
