import type { Knex } from 'knex';

/**
 * The RPC URL a Stellar chain's operator publishes for clients (`publicRpcUrl` in the
 * registry file, shown by `GET /v1/chains` beside `networkPassphrase`), kept apart from `rpc_url`,
 * the service's own endpoint, which is never shown. Null: the operator publishes none.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('chains', (t) => {
    t.text('public_rpc_url');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('chains', (t) => {
    t.dropColumn('public_rpc_url');
  });
}
