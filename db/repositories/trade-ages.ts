import type { Knex } from 'knex';

/** The statuses a trade can still leave; how long each open trade has been in its status. */
export const OPEN_TRADE_STATUSES = ['PENDING', 'DEPOSITED', 'LOCKED'] as const;

/**
 * Seconds the longest-waiting trade of each open status has spent in it (0 when none is in it).
 * A trade enters DEPOSITED and LOCKED with the chain event that moved it (the latest one recorded
 * for it); PENDING at creation.
 */
export async function oldestOpenTradeAges(knex: Knex): Promise<Record<(typeof OPEN_TRADE_STATUSES)[number], number>> {
  const rows: { status: string; age: string | null }[] = (await knex.raw(`
    SELECT t.status, extract(epoch FROM now() - min(coalesce(e.entered_at, t.created_at)))::float8 AS age
      FROM trades t
      LEFT JOIN LATERAL (
        SELECT max(created_at) AS entered_at FROM chain_events
         WHERE subject_kind = 'trade' AND subject_id = t.id
      ) e ON true
     WHERE t.status IN ('PENDING', 'DEPOSITED', 'LOCKED')
     GROUP BY t.status`)).rows;
  const ages = { PENDING: 0, DEPOSITED: 0, LOCKED: 0 };
  for (const row of rows) ages[row.status as keyof typeof ages] = Math.max(0, Number(row.age ?? 0));
  return ages;
}
