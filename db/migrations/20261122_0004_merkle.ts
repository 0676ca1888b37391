import type { Knex } from 'knex';

/**
 * The order chains' deposit trees (prover/merkle/): one row per (order chain, OrderPortal), and
 * its non-empty nodes. A node that has no row is the root of an empty subtree (a zero hash), so a
 * tree with n leaves stores about 2n + 20 rows. Level 0 holds the leaves, level 20 the root.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('merkle_trees', (t) => {
    t.bigIncrements('id').primary();
    t.text('chain_id').notNullable();
    t.text('portal_address').notNullable();
    // Highest leaf index + 1, and how many leaves are present: equal when the tree has no gap.
    t.integer('size').notNullable().defaultTo(0);
    t.integer('leaf_count').notNullable().defaultTo(0);
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['chain_id', 'portal_address']);
  });
  await knex.raw(`ALTER TABLE merkle_trees ADD CONSTRAINT merkle_trees_counts_check CHECK (leaf_count >= 0 AND leaf_count <= size)`);

  await knex.schema.createTable('merkle_nodes', (t) => {
    t.bigInteger('tree_id').notNullable().references('merkle_trees.id').onDelete('CASCADE');
    t.smallint('level').notNullable();
    t.integer('idx').notNullable();
    t.decimal('hash', 78, 0).notNullable();
    t.primary(['tree_id', 'level', 'idx']);
  });
  await knex.raw(`ALTER TABLE merkle_nodes ADD CONSTRAINT merkle_nodes_position_check
    CHECK (level BETWEEN 0 AND 20 AND idx >= 0 AND idx < (1 << (20 - level)))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('merkle_nodes');
  await knex.schema.dropTable('merkle_trees');
}
