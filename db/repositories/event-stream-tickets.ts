import type { Knex } from 'knex';

/**
 * Single-use tickets that open a user's event stream without an Authorization header (a browser's
 * EventSource). Stored by SHA-256 hash only: the table never holds a usable ticket.
 */

export interface NewEventStreamTicket {
  ticketHash: string;
  sessionId: string;
  userId: string;
  expiresAt: Date;
  /** The expiry of the access token that asked: the stream the ticket opens ends then. */
  streamUntil: Date;
}

/** Stores a ticket. */
export async function insertEventStreamTicket(db: Knex | Knex.Transaction, ticket: NewEventStreamTicket): Promise<void> {
  await db('event_stream_tickets').insert({
    ticket_hash: ticket.ticketHash,
    session_id: ticket.sessionId,
    user_id: ticket.userId,
    expires_at: ticket.expiresAt,
    stream_until: ticket.streamUntil,
  });
}

/** Why a ticket did not open a stream. */
export type TicketRefusal = 'unknown' | 'used' | 'expired' | 'session_ended';

/**
 * Spends the ticket if it is live: known by this hash, unused, unexpired, and its session neither
 * revoked nor past its end; one UPDATE, so of two concurrent uses exactly one wins (the other waits
 * on the row lock, then sees `used_at` set). Returns the session and user it opens a stream for,
 * or why not.
 */
export async function consumeEventStreamTicket(
  db: Knex | Knex.Transaction,
  ticketHash: string,
): Promise<{ ok: true; sessionId: string; userId: string; streamUntil: Date } | { ok: false; refusal: TicketRefusal }> {
  const spent = await db.raw<{ rows: { session_id: string; user_id: string; stream_until: Date }[] }>(
    `UPDATE event_stream_tickets t SET used_at = now()
       FROM sessions s
      WHERE t.ticket_hash = ? AND t.used_at IS NULL AND t.expires_at > now()
        AND s.id = t.session_id AND s.revoked_at IS NULL AND s.expires_at > now()
      RETURNING t.session_id, t.user_id, t.stream_until`,
    [ticketHash],
  );
  const row = spent.rows[0];
  if (row) return { ok: true, sessionId: row.session_id, userId: row.user_id, streamUntil: row.stream_until };
  const found = await db.raw<{ rows: { used: boolean; expired: boolean; ended: boolean }[] }>(
    `SELECT t.used_at IS NOT NULL AS used, t.expires_at <= now() AS expired,
            (s.revoked_at IS NOT NULL OR s.expires_at <= now()) AS ended
       FROM event_stream_tickets t JOIN sessions s ON s.id = t.session_id
      WHERE t.ticket_hash = ?`,
    [ticketHash],
  );
  const state = found.rows[0];
  if (!state) return { ok: false, refusal: 'unknown' };
  if (state.used) return { ok: false, refusal: 'used' };
  if (state.ended) return { ok: false, refusal: 'session_ended' };
  return { ok: false, refusal: 'expired' };
}

/**
 * Marks these tickets used (those unused), so they open nothing: a ticket refused for another
 * reason than itself is spent all the same. Returns how many were live.
 */
export async function spendEventStreamTickets(db: Knex | Knex.Transaction, ticketHashes: string[]): Promise<number> {
  if (ticketHashes.length === 0) return 0;
  return db('event_stream_tickets').whereIn('ticket_hash', ticketHashes).whereNull('used_at').update({ used_at: db.fn.now() });
}

/** Deletes expired tickets (used or not: neither can open anything any more); returns how many. */
export async function deleteExpiredEventStreamTickets(db: Knex | Knex.Transaction): Promise<number> {
  return db('event_stream_tickets').where('expires_at', '<=', db.fn.now()).delete();
}
