import type { Knex } from 'knex';

/**
 * Retention: deleting a pushed event cascades to its `user_event_feed` rows, and the
 * retention job asks whether an event is still in a feed. Without an index on `event_id` each
 * deleted event is a scan of the whole feed (20,000 events took 45 s in retention.test.ts).
 * Expand-only: a new index, nothing the previous release reads or writes changes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX user_event_feed_event_idx ON user_event_feed (event_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX user_event_feed_event_idx');
}
