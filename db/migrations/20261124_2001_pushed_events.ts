import type { Knex } from 'knex';

/**
 * The outbox of pushed status (docs/flows/pushed-status.md). Every state change is written here
 * in the transaction that makes it, so nothing is published that was not committed and nothing
 * committed is lost:
 * - `pushed_events`: one row per event; a trade's events carry `trade_seq`, 1, 2, 3... in commit
 *   order (assigned while the trade row is locked), which is the id of its SSE stream.
 * - `user_event_feed`: the same events per user (the Maker and the Bridger of a trade, the ad's
 *   Maker), numbered per user in commit order through `user_event_counters` (its row stays locked
 *   until the writing transaction commits): the ids of `GET /v1/events` and the order of webhooks.
 * - `webhook_endpoints` / `webhook_deliveries`: where a user's feed is delivered, how far each
 *   endpoint got, and every attempt (the delivery log the owner reads).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('pushed_events', (t) => {
    t.bigIncrements('id').primary();
    t.text('type').notNullable();
    t.uuid('trade_id');
    t.integer('trade_seq');
    t.uuid('ad_id');
    t.jsonb('data').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['trade_id', 'trade_seq'], { indexName: 'pushed_events_trade_seq_unique' });
  });
  await knex.schema.createTable('user_event_counters', (t) => {
    t.uuid('user_id').primary().references('users.id').onDelete('CASCADE');
    t.bigInteger('last_seq').notNullable();
  });
  await knex.schema.createTable('user_event_feed', (t) => {
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.bigInteger('seq').notNullable();
    t.bigInteger('event_id').notNullable().references('pushed_events.id').onDelete('CASCADE');
    t.primary(['user_id', 'seq']);
  });
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.uuid('id').primary();
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE').index('webhook_endpoints_user_idx');
    t.text('url').notNullable();
    t.text('description').notNullable().defaultTo('');
    // whsec_<base64>: HMAC keys must be readable to sign. The previous one keeps signing (a second
    // signature) until previous_secret_expires_at, so receivers can rotate without a gap.
    t.text('secret').notNullable();
    t.text('previous_secret');
    t.timestamp('previous_secret_expires_at', { useTz: true });
    t.text('status').notNullable().defaultTo('ACTIVE').checkIn(['ACTIVE', 'DISABLED'], 'webhook_endpoints_status_check');
    t.text('disabled_reason');
    // The user's feed up to here is delivered; deliveries go strictly in feed order.
    t.bigInteger('delivered_seq').notNullable();
    t.integer('consecutive_failures').notNullable().defaultTo(0);
    t.timestamp('failing_since', { useTz: true });
    t.timestamp('next_attempt_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.bigIncrements('id').primary();
    t.uuid('endpoint_id').notNullable().references('webhook_endpoints.id').onDelete('CASCADE');
    t.bigInteger('event_id').notNullable();
    t.bigInteger('seq').notNullable();
    t.text('message_id').notNullable();
    t.integer('attempt').notNullable();
    t.boolean('succeeded').notNullable();
    t.integer('status_code');
    t.text('error');
    t.integer('duration_ms').notNullable();
    t.timestamp('attempted_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['endpoint_id', 'id'], 'webhook_deliveries_endpoint_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['webhook_deliveries', 'webhook_endpoints', 'user_event_feed', 'user_event_counters', 'pushed_events']) {
    await knex.schema.dropTable(table);
  }
}
