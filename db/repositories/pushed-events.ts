import type { Knex } from 'knex';
import type { PushedEvent, PushedEventData } from '../../domain/index.ts';

/** The PostgreSQL channel a committed batch of events is announced on (NOTIFY is delivered on commit only). */
export const PUSHED_EVENTS_CHANNEL = 'pushed_events';

/** What a NOTIFY on PUSHED_EVENTS_CHANNEL carries: which streams have something new. */
export interface PushedEventsNotice {
  /** The trade whose stream grew, if any. */
  tradeId: string | null;
  /** The users whose feeds grew. */
  userIds: string[];
  /**
   * Those of `userIds` with an active webhook endpoint when the events committed (absent in a notice
   * from an older release: then any of `userIds` may have one). A deliverer looks up endpoints only
   * for these, so a commit for users without webhooks costs it no query.
   */
  webhookUserIds?: string[];
}

export interface NewPushedEvents {
  /** The trade the events are about; the caller holds its row lock (lockTrade), or inserted it in this transaction. */
  tradeId?: string;
  adId?: string;
  /** Wallet addresses whose users' feeds get the events (unknown addresses are skipped). */
  recipients: string[];
  events: PushedEventData[];
}

/** A committed event read back from a stream: `seq` is its id there (per trade or per user). */
export type StoredPushedEvent = PushedEvent & { seq: number; eventId: string; tradeId: string | null };

/**
 * Appends events to the outbox inside the caller's transaction: numbered per trade (the trade row
 * lock orders writers) and per user (each user's counter row stays locked until commit, taken in
 * one order so two writers never deadlock), and announced by NOTIFY, which PostgreSQL delivers
 * only if the transaction commits. Call it last in the transaction, after the state it describes.
 */
export async function appendPushedEvents(trx: Knex.Transaction, input: NewPushedEvents): Promise<void> {
  if (input.events.length === 0) return;
  let tradeSeq = 0;
  if (input.tradeId) {
    const row = await trx('pushed_events').where({ trade_id: input.tradeId }).max<{ max: number | null }>('trade_seq as max').first();
    tradeSeq = row?.max ?? 0;
  }
  const inserted: Array<{ id: string }> = await trx('pushed_events')
    .insert(input.events.map((event) => ({
      type: event.type,
      trade_id: input.tradeId ?? null,
      trade_seq: input.tradeId ? ++tradeSeq : null,
      ad_id: input.adId ?? null,
      data: JSON.stringify(event.data),
    })))
    .returning('id');
  const eventIds = inserted.map((row) => String(row.id)).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
  const recipients = [...new Set(input.recipients)];
  // One statement for every recipient's feed: their users, each counter advanced by the batch
  // (rows taken in user id order, as every writer does, so two writers never deadlock; each stays
  // locked until commit, which orders the feed), and the feed rows numbered from the counter.
  // Which of them have an active webhook endpoint is read in the same statement, for the notice.
  type Recipient = { user_id: string; hooked: boolean };
  const users: Recipient[] = recipients.length === 0 ? [] : (await trx.raw<{ rows: Recipient[] }>(
    `WITH users AS (
       SELECT DISTINCT user_id FROM wallets WHERE address = ANY(?::text[])
     ), counters AS (
       INSERT INTO user_event_counters (user_id, last_seq)
       SELECT user_id, ?::bigint FROM users ORDER BY user_id
       ON CONFLICT (user_id) DO UPDATE SET last_seq = user_event_counters.last_seq + EXCLUDED.last_seq
       RETURNING user_id, last_seq
     ), feed AS (
       INSERT INTO user_event_feed (user_id, seq, event_id)
       SELECT c.user_id, c.last_seq - ?::bigint + e.ord, e.id
       FROM counters c CROSS JOIN unnest(?::bigint[]) WITH ORDINALITY AS e(id, ord)
     )
     SELECT c.user_id, EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.user_id = c.user_id AND w.status = 'ACTIVE') AS hooked
     FROM counters c ORDER BY c.user_id`,
    [recipients, eventIds.length, eventIds.length, eventIds],
  )).rows;
  const notice: PushedEventsNotice = {
    tradeId: input.tradeId ?? null,
    userIds: users.map((u) => u.user_id),
    webhookUserIds: users.filter((u) => u.hooked).map((u) => u.user_id),
  };
  await trx.raw('SELECT pg_notify(?, ?)', [PUSHED_EVENTS_CHANNEL, JSON.stringify(notice)]);
}

interface EventRow { seq: string | number; id: string; type: string; trade_id: string | null; data: unknown; created_at: Date }

const toEvent = (row: EventRow): StoredPushedEvent => ({
  seq: Number(row.seq),
  eventId: String(row.id),
  tradeId: row.trade_id,
  type: row.type,
  timestamp: row.created_at.toISOString(),
  data: row.data,
} as StoredPushedEvent);

/** A trade's committed events after `afterSeq`, in order (at most `limit`). */
export async function tradeEventsAfter(knex: Knex, tradeId: string, afterSeq: number, limit = 500): Promise<StoredPushedEvent[]> {
  const rows: EventRow[] = await knex('pushed_events')
    .select('trade_seq as seq', 'id', 'type', 'trade_id', 'data', 'created_at')
    .where({ trade_id: tradeId }).andWhere('trade_seq', '>', afterSeq)
    .orderBy('trade_seq').limit(limit);
  return rows.map(toEvent);
}

/** A user's committed feed after `afterSeq`, in order (at most `limit`). */
export async function userEventsAfter(knex: Knex, userId: string, afterSeq: number, limit = 500): Promise<StoredPushedEvent[]> {
  return (await userEventsForSessions(knex, userId, afterSeq, [], limit)).events;
}

/**
 * A user's committed feed after `afterSeq` (at most `limit`, in order), and which of `sessionIds`
 * are live, both read in one statement, so one snapshot: an event committed after a session's
 * revocation is never returned beside that session as live. (`liveSessions` is empty when no
 * event is returned: nothing is to be delivered then.)
 */
export async function userEventsForSessions(
  knex: Knex, userId: string, afterSeq: number, sessionIds: string[], limit = 500,
): Promise<{ events: StoredPushedEvent[]; liveSessions: Set<string> }> {
  const live = sessionIds.length === 0
    ? knex.raw("'{}'::uuid[] AS live_sessions")
    : knex.raw(
      'ARRAY(SELECT s.id FROM sessions s WHERE s.id = ANY(?::uuid[]) AND s.revoked_at IS NULL AND s.expires_at > now()) AS live_sessions',
      [sessionIds],
    );
  const rows: Array<EventRow & { live_sessions: string[] }> = await knex('user_event_feed as f')
    .join('pushed_events as e', 'e.id', 'f.event_id')
    .select('f.seq', 'e.id', 'e.type', 'e.trade_id', 'e.data', 'e.created_at', live)
    .where('f.user_id', userId).andWhere('f.seq', '>', afterSeq)
    .orderBy('f.seq').limit(limit);
  return { events: rows.map(toEvent), liveSessions: new Set(rows[0]?.live_sessions ?? []) };
}

/** The last position of a user's feed (0 when nothing was ever published to it). */
export async function lastUserSeq(knex: Knex, userId: string): Promise<number> {
  const row = await knex('user_event_counters').select('last_seq').where({ user_id: userId }).first();
  return row ? Number(row.last_seq) : 0;
}
