import type { Knex } from 'knex';

/**
 * A trade can be found by any of its verified transactions (`GET /v1/trades/all?txHash=`).
 * `chain_events` already records every verified event of a trade (subject 'trade'), keyed by
 * (chain, transaction, log index); this index finds a trade's events by the transaction alone.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX chain_events_trade_tx_idx ON chain_events (tx_hash, subject_id) WHERE subject_kind = 'trade'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX chain_events_trade_tx_idx');
}
