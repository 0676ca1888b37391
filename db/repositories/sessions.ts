import type { Knex } from 'knex';
import type { ChainKind } from '../../domain/index.ts';

/**
 * Sessions (one per sign-in) and their refresh-token family. Refresh tokens are kept as SHA-256
 * hashes only; a token is usable once (`rotated_at` set when it is exchanged).
 */

/** Opens a session for the user that ends at `expiresAt` whatever refreshes happen; returns its id. */
export async function createSession(db: Knex | Knex.Transaction, userId: string, expiresAt: Date): Promise<string> {
  const [row] = await db('sessions').insert({ user_id: userId, expires_at: expiresAt }).returning<{ id: string }[]>('id');
  return row!.id;
}

/** Stores a refresh token of a session by its id (`jti`) and hash. */
export async function insertRefreshToken(
  db: Knex | Knex.Transaction,
  token: { id: string; sessionId: string; tokenHash: string; expiresAt: Date },
): Promise<void> {
  await db('refresh_tokens').insert({
    id: token.id,
    session_id: token.sessionId,
    token_hash: token.tokenHash,
    expires_at: token.expiresAt,
  });
}

/** What the refresh token row says when it cannot be rotated. */
export type RefreshTokenState = 'unknown' | 'revoked' | 'reused' | 'expired' | 'session_ended';

/**
 * Marks the refresh token rotated if it is live: known with this hash, not yet rotated, unexpired,
 * its session neither revoked nor past its absolute end; one statement, so two concurrent refreshes
 * cannot both win. Returns the session (with its end), and user on success, else why not.
 */
export async function rotateRefreshToken(
  db: Knex | Knex.Transaction,
  id: string,
  tokenHash: string,
): Promise<
  | { ok: true; sessionId: string; userId: string; sessionExpiresAt: Date }
  | { ok: false; state: RefreshTokenState; sessionId?: string }
> {
  const rotated = await db.raw<{ rows: { session_id: string; user_id: string; expires_at: Date }[] }>(
    `UPDATE refresh_tokens r SET rotated_at = now()
       FROM sessions s
      WHERE r.id = ? AND r.token_hash = ? AND r.rotated_at IS NULL AND r.expires_at > now()
        AND s.id = r.session_id AND s.revoked_at IS NULL AND s.expires_at > now()
      RETURNING r.session_id, s.user_id, s.expires_at`,
    [id, tokenHash],
  );
  const row = rotated.rows[0];
  if (row) return { ok: true, sessionId: row.session_id, userId: row.user_id, sessionExpiresAt: row.expires_at };
  const found = await db.raw<{ rows: { session_id: string; rotated: boolean; expired: boolean; revoked: boolean; ended: boolean }[] }>(
    `SELECT r.session_id, r.rotated_at IS NOT NULL AS rotated, r.expires_at <= now() AS expired,
            s.revoked_at IS NOT NULL AS revoked, s.expires_at <= now() AS ended
       FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id
      WHERE r.id = ? AND r.token_hash = ?`,
    [id, tokenHash],
  );
  const state = found.rows[0];
  if (!state) return { ok: false, state: 'unknown' };
  if (state.revoked) return { ok: false, state: 'revoked', sessionId: state.session_id };
  if (state.ended) return { ok: false, state: 'session_ended', sessionId: state.session_id };
  if (state.rotated) return { ok: false, state: 'reused', sessionId: state.session_id };
  return { ok: false, state: 'expired', sessionId: state.session_id };
}

/**
 * Revokes the session: its refresh tokens and the access tokens naming it stop working (the update
 * NOTIFYs `session_changes`, so every api process drops it from its session cache).
 */
export async function revokeSession(db: Knex | Knex.Transaction, sessionId: string, reason: string): Promise<void> {
  await db('sessions').where({ id: sessionId }).whereNull('revoked_at').update({ revoked_at: db.fn.now(), revoked_reason: reason });
}

/**
 * The caller behind a live session: its user and wallet addresses by chain kind, with the session's
 * absolute end (`endsAt`); null when revoked, ended or unknown.
 */
export async function findLiveSessionPrincipal(
  db: Knex | Knex.Transaction,
  sessionId: string,
  userId: string,
): Promise<{ principal: { userId: string; sessionId: string; wallets: Partial<Record<ChainKind, string>> }; endsAt: Date } | null> {
  // One query per authenticated request the process's session cache does not answer: the live
  // session with its user's wallets (a session row with no wallet gives one row of nulls; no row: not live).
  const rows = await db('sessions as s')
    .leftJoin('wallets as w', 'w.user_id', 's.user_id')
    .where({ 's.id': sessionId, 's.user_id': userId })
    .whereNull('s.revoked_at')
    .where('s.expires_at', '>', db.fn.now())
    .select<{ chain_kind: ChainKind | null; address: string | null; expires_at: Date }[]>('w.chain_kind', 'w.address', 's.expires_at');
  if (rows.length === 0) return null;
  const wallets: Partial<Record<ChainKind, string>> = {};
  for (const row of rows) if (row.chain_kind && row.address) wallets[row.chain_kind] = row.address;
  return { principal: { userId, sessionId, wallets }, endsAt: rows[0]!.expires_at };
}

/** Which of these sessions are live (neither revoked nor past their end); unknown ids are not. */
export async function liveSessionIds(db: Knex | Knex.Transaction, sessionIds: string[]): Promise<string[]> {
  if (sessionIds.length === 0) return [];
  const rows: { id: string }[] = await db('sessions').select('id')
    .whereIn('id', sessionIds).whereNull('revoked_at').where('expires_at', '>', db.fn.now());
  return rows.map((row) => row.id);
}

/**
 * Deletes what can never be used again: refresh tokens past their expiry, sessions past their
 * absolute end (their tokens go with them), and revoked sessions none of whose refresh tokens is
 * still unexpired (until then a stolen one presented again is still answered "revoked").
 * Returns how many rows of each went.
 */
export async function deleteEndedSessions(db: Knex | Knex.Transaction): Promise<{ sessions: number; refreshTokens: number }> {
  const refreshTokens = await db('refresh_tokens').where('expires_at', '<=', db.fn.now()).delete();
  const sessions = await db.raw<{ rowCount: number }>(
    `DELETE FROM sessions s
      WHERE s.expires_at <= now()
         OR (s.revoked_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.session_id = s.id AND r.expires_at > now()))`,
  );
  return { sessions: sessions.rowCount ?? 0, refreshTokens };
}
