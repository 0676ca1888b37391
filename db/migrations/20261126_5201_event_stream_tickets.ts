import type { Knex } from 'knex';

/**
 * Single-use tickets that open a user's event stream (`GET /v1/events?ticket=`) where no
 * Authorization header can be sent (a browser's EventSource). Kept as SHA-256 hashes only, like
 * refresh tokens; bound to the session that asked (deleted with it); `stream_until` is the expiry of
 * the access token that asked, which the stream opened by the ticket does not outlive. `used_at`
 * marks a ticket spent (one statement, so two uses of one ticket open one stream). The auth purge
 * deletes expired tickets.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('event_stream_tickets', (t) => {
    t.string('ticket_hash', 64).primary();
    t.uuid('session_id').notNullable().references('id').inTable('sessions').onDelete('CASCADE');
    t.uuid('user_id').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('stream_until', { useTz: true }).notNullable();
    t.timestamp('used_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['expires_at'], 'event_stream_tickets_expires_at_idx');
    t.index(['session_id'], 'event_stream_tickets_session_id_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('event_stream_tickets');
}
