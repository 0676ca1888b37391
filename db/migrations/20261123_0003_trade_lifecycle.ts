import type { Knex } from 'knex';

/**
 * What a trade's lifecycle needs beyond the read model: the order it signed for (parameters,
 * hash, the relayer-held secret behind the deposit's commitment, its times), the reservation's
 * expiry, the deposit's leaf, and the proof once made.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('trades', (t) => {
    t.jsonb('order_params');
    t.text('order_hash').unique();
    // The secret behind secretCommitment: the relayer proves with it; it never leaves the service.
    t.text('secret');
    t.text('secret_commitment');
    t.timestamp('reservation_expires_at', { useTz: true });
    t.timestamp('lock_deadline', { useTz: true });
    t.text('proof_state').notNullable().defaultTo('none').checkIn(['none', 'running', 'ready'], 'trades_proof_state_check');
    t.integer('leaf_index');
    t.text('leaf');
    // { proof, publicSignals, nullifierHash, targetRoot }
    t.jsonb('proof');
  });
  await knex.raw(`CREATE INDEX trades_open_idx ON trades (status) WHERE status IN ('PENDING', 'DEPOSITED', 'LOCKED')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX trades_open_idx');
  await knex.schema.alterTable('trades', (t) => {
    for (const column of [
      'order_params',
      'order_hash',
      'secret',
      'secret_commitment',
      'reservation_expires_at',
      'lock_deadline',
      'proof_state',
      'leaf_index',
      'leaf',
      'proof',
    ]) t.dropColumn(column);
  });
}
