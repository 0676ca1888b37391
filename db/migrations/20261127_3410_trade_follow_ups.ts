import type { Knex } from 'knex';

/**
 * The follow-ups outbox. Every event applied to a trade writes, in its own transaction,
 * what the machine asks to be carried out next (arm or cancel a timer, prove, the trade's end):
 * an orchestrator carries each row out and marks it, and one that stopped before it did finds the
 * row still pending after a restart. Expand only: a new table the previous release never touches.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE trade_follow_ups (
      seq bigserial PRIMARY KEY,
      trade_id uuid NOT NULL REFERENCES trades(id) ON DELETE CASCADE,
      follow_up jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      carried_out_at timestamptz
    )`);
  await knex.raw('CREATE INDEX trade_follow_ups_pending_idx ON trade_follow_ups (seq) WHERE carried_out_at IS NULL');
  await knex.raw('CREATE INDEX trade_follow_ups_trade_idx ON trade_follow_ups (trade_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE trade_follow_ups');
}
