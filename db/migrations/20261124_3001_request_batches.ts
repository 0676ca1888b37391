import type { Knex } from 'knex';

/**
 * The chains are the truth:
 * - One transaction may answer several ad requests (a batching contract, a smart account): the
 *   unique (chain, tx hash) on ad_requests goes; chain_events keeps one row per event under
 *   (chain, tx hash, log index).
 * - `EXECUTED`: a request whose confirmation window closed unconfirmed, but the chain says it was
 *   carried out (its authToken is spent). Its hold stays (the money left on chain) until its event
 *   is found and applied; it is never given back to the ad.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE ad_requests DROP CONSTRAINT IF EXISTS ad_requests_chain_id_tx_hash_unique');
  await knex.raw('CREATE INDEX ad_requests_chain_tx_idx ON ad_requests (chain_id, tx_hash)');
  await knex.raw('ALTER TABLE ad_requests DROP CONSTRAINT ad_requests_status_check');
  await knex.raw(`ALTER TABLE ad_requests ADD CONSTRAINT ad_requests_status_check CHECK (status IN ('PENDING', 'CONFIRMED', 'EXPIRED', 'EXECUTED'))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`UPDATE ad_requests SET status = 'PENDING' WHERE status = 'EXECUTED'`);
  await knex.raw('ALTER TABLE ad_requests DROP CONSTRAINT ad_requests_status_check');
  await knex.raw(`ALTER TABLE ad_requests ADD CONSTRAINT ad_requests_status_check CHECK (status IN ('PENDING', 'CONFIRMED', 'EXPIRED'))`);
  await knex.raw('DROP INDEX ad_requests_chain_tx_idx');
  await knex.raw('ALTER TABLE ad_requests ADD CONSTRAINT ad_requests_chain_id_tx_hash_unique UNIQUE (chain_id, tx_hash)');
}
