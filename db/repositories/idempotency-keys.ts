import type { Knex } from 'knex';

/** A stored answer to replay: status, the exact body text and the headers that describe it. */
export interface StoredResponse {
  statusCode: number;
  body: string;
  headers: Record<string, string>;
}

/** What a request found under its (user, key). */
export type KeyClaim =
  /** The key is this request's: run it, then `completeIdempotencyKey` or `releaseIdempotencyKey` with `claim`. */
  | { kind: 'claimed'; claim: string }
  /** The key answered another request (another method, path or body). */
  | { kind: 'mismatch' }
  /** The same request ran first and its answer is stored. */
  | { kind: 'completed'; response: StoredResponse }
  /** The same request runs now, elsewhere. */
  | { kind: 'in_flight' }
  /**
   * The same request started longer ago than `staleAfterSeconds` and never stored an answer (its
   * process died, or the answer's write was lost), and it may not be run again (`takeOverStale` false):
   * whether it took effect is unknown.
   */
  | { kind: 'abandoned' }
  /**
   * A new key for a user who already stores `maxKeysPerUser` live keys: nothing was stored. One frees
   * when the oldest expires, in `retryAfterSeconds`.
   */
  | { kind: 'exhausted'; retryAfterSeconds: number };

export interface ClaimRequest {
  userId: string;
  key: string;
  fingerprint: string;
  /** How long a completed answer is replayed. */
  ttlSeconds: number;
  /** An unfinished row older than this counts as abandoned (its process died, or its answer was not stored). */
  staleAfterSeconds: number;
  /**
   * Whether the same request may take an abandoned row over and run again: only for operations whose
   * second run cannot make a second effect (a confirm: the same txHash is a duplicate). Otherwise the
   * row answers `abandoned` until it expires.
   */
  takeOverStale: boolean;
  /** How many live keys (unexpired, answered or running) a user may hold; a key already held is not a new one. */
  maxKeysPerUser: number;
}

/**
 * Claims (user, key) for a request, or says who holds it. A user's claims are taken one at a time
 * (a transaction-scoped advisory lock on the user), so the count of their live keys is exact: a new
 * key past `maxKeysPerUser` is refused, and of concurrent new keys at the limit exactly as many pass
 * as there is room for. A key the user already holds (a replay, a retry) is not a new one. A
 * concurrent duplicate waits for the first claim's commit, then sees its row. A row past its expiry
 * is taken whatever it answered (a new key, counted); an unfinished row older than
 * `staleAfterSeconds` is taken only by the same request (same fingerprint).
 */
export async function claimIdempotencyKey(knex: Knex, request: ClaimRequest): Promise<KeyClaim> {
  const claimed = await knex.transaction(async (trx) => {
    await trx.raw(`SELECT pg_advisory_xact_lock(hashtextextended('idempotency-keys:' || ?, 0))`, [request.userId]);
    // After the lock, in a statement of its own: its snapshot holds every claim committed before.
    return trx.raw<{ rows: { claim: string | null; exhausted: boolean; retry_after: number | null }[] }>(
      `WITH prior AS (
         SELECT expires_at > now() AS live FROM idempotency_keys WHERE user_id = ? AND key = ?
       ), room AS (
         SELECT EXISTS (SELECT 1 FROM prior WHERE live)
             OR (SELECT count(*) FROM (SELECT 1 FROM idempotency_keys WHERE user_id = ? AND expires_at > now() LIMIT ?) kept) < ? AS ok
       ), claimed AS (
         INSERT INTO idempotency_keys (user_id, key, fingerprint, claim, expires_at)
         SELECT ?, ?, ?, gen_random_uuid(), now() + make_interval(secs => ?) FROM room WHERE room.ok
         ON CONFLICT (user_id, key) DO UPDATE SET
           fingerprint = EXCLUDED.fingerprint, claim = EXCLUDED.claim, status_code = NULL, response_body = NULL,
           response_headers = NULL, started_at = now(), completed_at = NULL, expires_at = EXCLUDED.expires_at
         WHERE idempotency_keys.expires_at <= now()
            OR (?::boolean AND idempotency_keys.status_code IS NULL AND idempotency_keys.fingerprint = EXCLUDED.fingerprint
                AND idempotency_keys.started_at <= now() - make_interval(secs => ?))
         RETURNING claim
       )
       SELECT (SELECT claim FROM claimed) AS claim, NOT room.ok AS exhausted,
              CASE WHEN room.ok THEN NULL ELSE
                (SELECT ceil(extract(epoch FROM min(expires_at) - now()))::int FROM idempotency_keys WHERE user_id = ? AND expires_at > now())
              END AS retry_after
         FROM room`,
      [
        request.userId, request.key,
        request.userId, request.maxKeysPerUser, request.maxKeysPerUser,
        request.userId, request.key, request.fingerprint, request.ttlSeconds,
        request.takeOverStale, request.staleAfterSeconds,
        request.userId,
      ],
    );
  });
  const outcome = claimed.rows[0]!;
  if (outcome.exhausted) return { kind: 'exhausted', retryAfterSeconds: Math.max(1, outcome.retry_after ?? 1) };
  if (outcome.claim) return { kind: 'claimed', claim: outcome.claim };
  const row = await knex('idempotency_keys')
    .where({ user_id: request.userId, key: request.key })
    .first('fingerprint', 'status_code', 'response_body', 'response_headers',
      knex.raw('started_at <= now() - make_interval(secs => ?) AS stale', [request.staleAfterSeconds]));
  // Released (deleted) between the two statements: the caller claims again.
  if (!row) return { kind: 'in_flight' };
  if (row.fingerprint !== request.fingerprint) return { kind: 'mismatch' };
  if (row.status_code === null) return { kind: row.stale ? 'abandoned' : 'in_flight' };
  return { kind: 'completed', response: { statusCode: row.status_code, body: row.response_body, headers: row.response_headers ?? {} } };
}

/** Stores the answer of the request holding `claim`; returns false when another request took the key over. */
export async function completeIdempotencyKey(knex: Knex, userId: string, key: string, claim: string, response: StoredResponse): Promise<boolean> {
  const updated = await knex('idempotency_keys').where({ user_id: userId, key, claim }).update({
    status_code: response.statusCode,
    response_body: response.body,
    response_headers: JSON.stringify(response.headers),
    completed_at: knex.fn.now(),
  });
  return updated > 0;
}

/** Frees the key held by `claim` (an answer not to replay: a refusal or a failure), so a retry runs again. */
export async function releaseIdempotencyKey(knex: Knex, userId: string, key: string, claim: string): Promise<void> {
  await knex('idempotency_keys').where({ user_id: userId, key, claim }).delete();
}

/** Deletes keys past their expiry; returns how many. */
export async function deleteExpiredIdempotencyKeys(knex: Knex): Promise<number> {
  return knex('idempotency_keys').where('expires_at', '<=', knex.fn.now()).delete();
}
