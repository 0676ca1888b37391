import type { Knex } from 'knex';

/**
 * One deliverer per webhook endpoint at a time, so deliveries leave in feed order: a worker leases
 * the endpoint until `leased_until` (longer than one delivery's timeout) and renews it per delivery;
 * a worker that died lets the lease run out and another takes over.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.timestamp('leased_until', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.dropColumn('leased_until');
  });
}
