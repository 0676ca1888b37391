import type { Knex } from 'knex';

/**
 * The start outbox (migration 20261124_2401): one row per trade whose lifecycle the orchestrator
 * may not have yet. Written with the reservation, deleted once the orchestrator has the trade.
 */

/** What starting a trade needs, read with its outbox row. */
export interface PendingTradeStart {
  tradeId: string;
  adId: string;
  routeId: string;
  reservationExpiresAt: Date;
  lockDeadline: Date;
  attempts: number;
}

/**
 * Records, inside the reservation's transaction, that the trade's lifecycle must be started. A
 * reconciler leaves the row alone for `graceSeconds`: the creating request starts it itself first.
 */
export async function recordTradeStart(trx: Knex.Transaction, tradeId: string, graceSeconds: number): Promise<void> {
  await trx('trade_starts').insert({
    trade_id: tradeId,
    next_attempt_at: trx.raw(`now() + make_interval(secs => ?)`, [graceSeconds]),
  });
}

/** The orchestrator has the trade: nothing is left to start. Deleting a missing row is a no-op. */
export async function clearTradeStart(knex: Knex, tradeId: string): Promise<void> {
  await knex('trade_starts').where({ trade_id: tradeId }).delete();
}

/**
 * Claims up to `limit` due rows (oldest first), moving each one's next attempt `leaseSeconds` ahead
 * so another reconciler skips it meanwhile; a row whose start then fails is simply due again later.
 */
export async function claimDueTradeStarts(knex: Knex, limit: number, leaseSeconds: number): Promise<PendingTradeStart[]> {
  const { rows } = await knex.raw(`
    WITH due AS (
      SELECT trade_id FROM trade_starts
       WHERE next_attempt_at <= now()
       ORDER BY created_at
       LIMIT ?
       FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE trade_starts s
         SET next_attempt_at = now() + make_interval(secs => ?), attempts = s.attempts + 1
        FROM due WHERE s.trade_id = due.trade_id
      RETURNING s.trade_id, s.attempts
    )
    SELECT t.id AS "tradeId", t.ad_id AS "adId", t.route_id AS "routeId",
           t.reservation_expires_at AS "reservationExpiresAt", t.lock_deadline AS "lockDeadline", c.attempts
      FROM claimed c JOIN trades t ON t.id = c.trade_id
     ORDER BY t.created_at`, [limit, leaseSeconds]);
  return rows as PendingTradeStart[];
}

/** The trade's pending start, whether due or not (a confirm finding no workflow starts it at once). */
export async function findTradeStart(knex: Knex, tradeId: string): Promise<PendingTradeStart | undefined> {
  return knex('trade_starts as s')
    .join('trades as t', 't.id', 's.trade_id')
    .where('s.trade_id', tradeId)
    .first(
      't.id as tradeId', 't.ad_id as adId', 't.route_id as routeId', 't.reservation_expires_at as reservationExpiresAt',
      't.lock_deadline as lockDeadline', 's.attempts',
    );
}

/** Why the last attempt failed, for operators reading the table. */
export async function noteTradeStartFailure(knex: Knex, tradeId: string, error: string): Promise<void> {
  await knex('trade_starts').where({ trade_id: tradeId }).update({ last_error: error.slice(0, 2000) });
}

/** How many starts are pending and how long the oldest has waited (seconds; 0 when none). */
export async function tradeStartBacklog(knex: Knex): Promise<{ pending: number; oldestSeconds: number }> {
  const row = (await knex.raw(`
    SELECT count(*)::int AS pending, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest
      FROM trade_starts`)).rows[0] as { pending: number; oldest: number };
  return { pending: row.pending, oldestSeconds: Math.max(0, row.oldest) };
}
