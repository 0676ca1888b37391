import type { Knex } from 'knex';
import { OPEN_TRADE_STATUSES, type OpenTradeStatus } from '../../domain/index.ts';

export { OPEN_TRADE_STATUSES };

/**
 * Seconds the longest-waiting trade of each open status has spent in it (0 when none is in it).
 * A trade enters DEPOSITED and LOCKED with the chain event that moved it (the latest one recorded
 * for it); PENDING at creation.
 */
export async function oldestOpenTradeAges(knex: Knex): Promise<Record<OpenTradeStatus, number>> {
  const rows: { status: string; age: string | null }[] = (await knex.raw(`
    SELECT t.status, extract(epoch FROM now() - min(coalesce(e.entered_at, t.created_at)))::float8 AS age
      FROM trades t
      LEFT JOIN LATERAL (
        SELECT max(created_at) AS entered_at FROM chain_events
         WHERE subject_kind = 'trade' AND subject_id = t.id
      ) e ON true
     WHERE t.status = ANY(?)
     GROUP BY t.status`, [[...OPEN_TRADE_STATUSES]])).rows;
  const ages = Object.fromEntries(OPEN_TRADE_STATUSES.map((status) => [status, 0])) as Record<OpenTradeStatus, number>;
  for (const row of rows) ages[row.status as keyof typeof ages] = Math.max(0, Number(row.age ?? 0));
  return ages;
}

/**
 * Open trades a timer should already have moved, by status: PENDING past its reservation's expiry
 * and DEPOSITED past its lock deadline, each by more than `graceSeconds` (so a timer firing on time
 * under load is not counted). Any such trade means an orchestrator lost its timer.
 */
export async function stuckTradeCounts(knex: Knex, graceSeconds: number): Promise<{ PENDING: number; DEPOSITED: number }> {
  const row = (await knex.raw(`
    SELECT count(*) FILTER (WHERE status = 'PENDING' AND reservation_expires_at < now() - make_interval(secs => ?))::int AS pending,
           count(*) FILTER (WHERE status = 'DEPOSITED' AND lock_deadline < now() - make_interval(secs => ?))::int AS deposited
      FROM trades
     WHERE status IN ('PENDING', 'DEPOSITED')`, [graceSeconds, graceSeconds])).rows[0] as { pending: number; deposited: number };
  return { PENDING: row.pending, DEPOSITED: row.deposited };
}

/**
 * Seconds since the deposit (its recorded `OrderCreated`) of the longest-waiting trade that is
 * deposited (DEPOSITED or LOCKED) and whose proof is not ready; 0 when none waits. A Maker taking
 * hours of the lock window to lock is normal; a deposit with no proof after minutes is not.
 */
export async function oldestDepositAwaitingProof(knex: Knex): Promise<number> {
  const row = (await knex.raw(`
    SELECT extract(epoch FROM now() - min(e.created_at))::float8 AS age
      FROM trades t
      JOIN chain_events e ON e.subject_kind = 'trade' AND e.subject_id = t.id AND e.event = 'OrderCreated'
     WHERE t.status IN ('DEPOSITED', 'LOCKED') AND t.proof_state <> 'ready'`)).rows[0] as { age: number | null } | undefined;
  return Math.max(0, Number(row?.age ?? 0));
}
