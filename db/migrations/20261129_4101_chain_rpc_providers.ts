import type { Knex } from 'knex';

/**
 * A chain read through several providers: `rpc_urls` lists them (best first; null: `rpc_url` alone,
 * which stays the first of the list so older readers keep one provider), `rpc_quorum` how many must
 * agree on a fact the books act on (null: a majority of them).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('chains', (t) => {
    t.specificType('rpc_urls', 'text[]');
    t.integer('rpc_quorum');
  });
  await knex.raw('ALTER TABLE chains ADD CONSTRAINT chains_rpc_quorum_positive CHECK (rpc_quorum IS NULL OR rpc_quorum >= 1)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('chains', (t) => {
    t.dropChecks(['chains_rpc_quorum_positive']);
    t.dropColumn('rpc_urls');
    t.dropColumn('rpc_quorum');
  });
}
