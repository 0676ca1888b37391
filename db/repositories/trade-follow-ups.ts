import type { Knex } from 'knex';

/** One pending row of the follow-ups outbox: what an orchestrator still has to carry out for a trade. */
export interface PendingFollowUp<F = unknown> {
  seq: number;
  tradeId: string;
  followUp: F;
  /** What starting the trade's lifecycle needs, for an orchestrator that finds none running. */
  trade: { tradeId: string; adId: string; routeId: string; reservationExpiresAt: Date; lockDeadline: Date };
}

/**
 * Writes a trade's follow-ups inside the caller's transaction (the one that applied the event):
 * pending, or already carried out when they travel back to their orchestrator with the result
 * (`carriedOut`: a Temporal activity's result is recorded by Temporal). Returns the rows' numbers
 * in order, for `markCarriedOut`. One statement; none when there is nothing to write.
 */
export async function appendFollowUps<F>(trx: Knex.Transaction, tradeId: string, followUps: readonly F[], carriedOut = false): Promise<number[]> {
  if (followUps.length === 0) return [];
  const rows: Array<{ seq: string | number }> = await trx('trade_follow_ups')
    .insert(followUps.map((followUp) => ({
      trade_id: tradeId, follow_up: JSON.stringify(followUp), ...(carriedOut ? { carried_out_at: trx.fn.now() } : {}),
    })))
    .returning('seq');
  return rows.map((row) => Number(row.seq));
}

/** Marks rows carried out (their orchestrator took them); rows marked before stay as they were. */
export async function markCarriedOut(knex: Knex, seqs: readonly number[]): Promise<void> {
  if (seqs.length === 0) return;
  await knex('trade_follow_ups').whereIn('seq', seqs).whereNull('carried_out_at').update({ carried_out_at: knex.fn.now() });
}

/**
 * Pending rows written at least `olderThanMs` ago (left by a process that stopped between the
 * commit and carrying them out), oldest first, at most `limit`.
 */
export async function pendingFollowUps<F = unknown>(knex: Knex, options: { olderThanMs: number; limit: number }): Promise<Array<PendingFollowUp<F>>> {
  const rows: Array<{ seq: string | number; trade_id: string; follow_up: F; ad_id: string; route_id: string; reservation_expires_at: Date; lock_deadline: Date }> =
    await knex('trade_follow_ups as f')
      .join('trades as t', 't.id', 'f.trade_id')
      .select('f.seq', 'f.trade_id', 'f.follow_up', 't.ad_id', 't.route_id', 't.reservation_expires_at', 't.lock_deadline')
      .whereNull('f.carried_out_at')
      .where('f.created_at', '<=', knex.raw(`now() - (? * interval '1 millisecond')`, [options.olderThanMs]))
      .orderBy('f.seq')
      .limit(options.limit);
  return rows.map((row) => ({
    seq: Number(row.seq), tradeId: row.trade_id, followUp: row.follow_up,
    trade: { tradeId: row.trade_id, adId: row.ad_id, routeId: row.route_id, reservationExpiresAt: row.reservation_expires_at, lockDeadline: row.lock_deadline },
  }));
}
