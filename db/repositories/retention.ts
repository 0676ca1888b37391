import type { Knex } from 'knex';

/**
 * The deletes of the retention job (retention/), one bounded batch per call: each is one short
 * statement in its own transaction that picks at most `limit` rows by primary key and deletes
 * them, so it holds row locks only, on at most `limit` rows, for milliseconds. The caller loops
 * until a batch comes back short. Every delete states in SQL what must never go: what an open trade
 * or an unsettled request still needs.
 */

/** The windows of one run, each a cut-off instant: rows older than it may go (subject to the guards). */
export interface RetentionCutoffs {
  /** Pushed events (and their per-user feed rows) of ended trades and of ads, older than this. */
  pushedEvents: Date;
  /** Webhook delivery attempts older than this. */
  webhookDeliveries: Date;
  /** Chain events of ended trades and settled ad requests, older than this. */
  chainEvents: Date;
  /** Confirmed or expired ad requests, created before this. */
  adRequests: Date;
  /** Carried-out follow-ups (`trade_follow_ups`) of trades that ended before this. */
  followUps: Date;
}

// A trade is open while PENDING, DEPOSITED or LOCKED; its stream replay, chain events and
// timers are all still needed. An ended trade keeps its events for the window after it ended
// (updated_at is the time of its last state change).
const TRADE_ENDED = `t.status NOT IN ('PENDING', 'DEPOSITED', 'LOCKED') AND t.updated_at < :cutoff`;

/**
 * One batch of pushed events that no reader can need any more: older than the cut-off; of a trade
 * that ended before the cut-off, or of no trade (ad events); and in no user's feed beyond what an
 * ACTIVE webhook endpoint of that user has delivered (a failing endpoint catches up from the feed).
 * Their `user_event_feed` rows go with them (ON DELETE CASCADE). Returns how many events went.
 */
export async function deletePushedEventsBatch(knex: Knex, cutoff: Date, limit: number): Promise<number> {
  const result = await knex.raw(`
    DELETE FROM pushed_events WHERE id IN (
      SELECT e.id FROM pushed_events e
      LEFT JOIN trades t ON t.id = e.trade_id
      WHERE e.created_at < :cutoff
        AND (e.trade_id IS NULL OR (${TRADE_ENDED}))
        AND NOT EXISTS (
          SELECT 1 FROM user_event_feed f JOIN webhook_endpoints w ON w.user_id = f.user_id AND w.status = 'ACTIVE'
          WHERE f.event_id = e.id AND f.seq > w.delivered_seq)
      ORDER BY e.id LIMIT :limit)`, { cutoff, limit });
  return result.rowCount ?? 0;
}

/** One batch of webhook delivery attempts older than the cut-off (the delivery log). */
export async function deleteWebhookDeliveriesBatch(knex: Knex, cutoff: Date, limit: number): Promise<number> {
  const result = await knex.raw(`
    DELETE FROM webhook_deliveries WHERE id IN (
      SELECT id FROM webhook_deliveries WHERE attempted_at < :cutoff ORDER BY id LIMIT :limit)`, { cutoff, limit });
  return result.rowCount ?? 0;
}

/**
 * One batch of chain events older than the cut-off whose subject is settled: a trade that ended
 * before the cut-off, or an ad request CONFIRMED or EXPIRED. The books audit sweeps only open
 * trades and PENDING or EXECUTED requests, and a settled subject takes no event any more, so these
 * are read by nobody; an open trade's or unsettled request's events always stay.
 */
export async function deleteChainEventsBatch(knex: Knex, cutoff: Date, limit: number): Promise<number> {
  const result = await knex.raw(`
    DELETE FROM chain_events WHERE id IN (
      SELECT c.id FROM chain_events c
      LEFT JOIN trades t ON c.subject_kind = 'trade' AND t.id = c.subject_id
      LEFT JOIN ad_requests r ON c.subject_kind = 'ad_request' AND r.id = c.subject_id
      WHERE c.created_at < :cutoff
        AND ((c.subject_kind = 'trade' AND (t.id IS NULL OR (${TRADE_ENDED})))
          OR (c.subject_kind = 'ad_request' AND (r.id IS NULL OR r.status IN ('CONFIRMED', 'EXPIRED'))))
      ORDER BY c.id LIMIT :limit)`, { cutoff, limit });
  return result.rowCount ?? 0;
}

/**
 * One batch of ad requests that are settled (CONFIRMED or EXPIRED: the ad's balances already hold
 * their outcome) and were created before the cut-off. PENDING and EXECUTED requests always stay:
 * the audit still has to settle them.
 */
export async function deleteAdRequestsBatch(knex: Knex, cutoff: Date, limit: number): Promise<number> {
  const result = await knex.raw(`
    DELETE FROM ad_requests WHERE id IN (
      SELECT id FROM ad_requests WHERE status IN ('CONFIRMED', 'EXPIRED') AND created_at < :cutoff ORDER BY id LIMIT :limit)`, { cutoff, limit });
  return result.rowCount ?? 0;
}

/**
 * One batch of the follow-ups outbox (`trade_follow_ups`) that nothing will read again: rows
 * carried out before the cut-off, of a trade that ended before it. A pending row always stays
 * (the sweep still has to carry it out, whatever its age or its trade's state), and so does every
 * row of an open trade (its timers and proof are still being carried out; the rows tell what was
 * asked when). Rows are picked in `seq` order along the primary key, oldest first.
 */
export async function deleteFollowUpsBatch(knex: Knex, cutoff: Date, limit: number): Promise<number> {
  const result = await knex.raw(`
    DELETE FROM trade_follow_ups WHERE seq IN (
      SELECT f.seq FROM trade_follow_ups f
      JOIN trades t ON t.id = f.trade_id
      WHERE f.carried_out_at IS NOT NULL AND f.carried_out_at < :cutoff
        AND ${TRADE_ENDED}
      ORDER BY f.seq LIMIT :limit)`, { cutoff, limit });
  return result.rowCount ?? 0;
}

/** Rows and total size (heap, indexes, TOAST) of each of `tables`, for the run's report and the drill. */
export async function tableSizes(knex: Knex, tables: readonly string[]): Promise<Record<string, { rows: number; bytes: number }>> {
  const sizes: Record<string, { rows: number; bytes: number }> = {};
  for (const table of tables) {
    const result = await knex.raw(`SELECT count(*)::int AS rows, pg_total_relation_size(?::regclass)::bigint AS bytes FROM ??`, [table, table]);
    sizes[table] = { rows: Number(result.rows[0].rows), bytes: Number(result.rows[0].bytes) };
  }
  return sizes;
}
