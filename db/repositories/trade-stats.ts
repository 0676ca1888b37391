import type { Knex } from 'knex';

/** How many trades are in each status. */
export async function tradeCountsByStatus(knex: Knex): Promise<Array<{ status: string; count: number }>> {
  const rows: { status: string; n: string }[] = await knex('trades').select('status').count({ n: '*' }).groupBy('status');
  return rows.map((row) => ({ status: row.status, count: Number(row.n) }));
}

/**
 * Seconds from the trade's deposit being recorded (its verified `OrderCreated` chain event) to now,
 * by the database's clock: the same answer whichever process asks, however many there are.
 * Undefined when no deposit is recorded.
 */
export async function secondsSinceDeposit(knex: Knex, tradeId: string): Promise<number | undefined> {
  const row: { seconds: number | null } | undefined = await knex('chain_events')
    .where({ subject_kind: 'trade', subject_id: tradeId, event: 'OrderCreated' })
    .first(knex.raw('extract(epoch FROM now() - min(created_at))::float8 AS seconds'));
  return row?.seconds ?? undefined;
}
