import type { Knex } from 'knex';

/**
 * - `trades.deposit_request`: the signed deposit call data a trade's create answered, kept as
 *   answered (`json`, so its text and key order are the answer's), so the Bridger who lost that
 *   answer gets the very same request again (GET /v1/trades/:id/deposit-request) rather than a second
 *   signature: two valid deposit requests for one trade could both be sent. Null on trades created
 *   before it was kept (their requests have long run out).
 * - `trades_status_idx`: the trade lists' `status` filter, newest first, from an index.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('trades', (t) => {
    t.json('deposit_request');
  });
  await knex.raw('CREATE INDEX trades_status_idx ON trades (status, created_at DESC, id DESC)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX trades_status_idx');
  await knex.schema.alterTable('trades', (t) => {
    t.dropColumn('deposit_request');
  });
}
