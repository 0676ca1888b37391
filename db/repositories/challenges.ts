import type { Knex } from 'knex';
import type { ChainKind } from '../../domain/index.ts';

/** A sign-in challenge as issued. */
export interface ChallengeRecord {
  chainKind: ChainKind;
  address: string;
  nonce: string;
  message: string;
  expiresAt: Date;
  usedAt: Date | null;
}

interface ChallengeRow {
  chain_kind: ChainKind;
  address: string;
  nonce: string;
  message: string;
  expires_at: Date;
  used_at: Date | null;
}

const COLUMNS = ['chain_kind', 'address', 'nonce', 'message', 'expires_at', 'used_at'];

const toChallenge = (row: ChallengeRow): ChallengeRecord => ({
  chainKind: row.chain_kind,
  address: row.address,
  nonce: row.nonce,
  message: row.message,
  expiresAt: row.expires_at,
  usedAt: row.used_at,
});

/** Stores a newly issued challenge. */
export async function insertChallenge(
  db: Knex | Knex.Transaction,
  challenge: { chainKind: ChainKind; address: string; nonce: string; message: string; expiresAt: Date },
): Promise<void> {
  await db('auth_challenges').insert({
    chain_kind: challenge.chainKind,
    address: challenge.address,
    nonce: challenge.nonce,
    message: challenge.message,
    expires_at: challenge.expiresAt,
  });
}

/**
 * Marks the challenge used if, and only if, it is the one described, unused and unexpired (by the
 * database clock), in one statement: of two concurrent logins with one challenge, one wins.
 * `message` null skips the text comparison (Stellar: the nonce is the transaction hash, which
 * already binds every field). Returns the challenge, or null when nothing matched.
 */
export async function consumeChallenge(
  db: Knex | Knex.Transaction,
  expected: { chainKind: ChainKind; address: string; nonce: string; message: string | null },
): Promise<ChallengeRecord | null> {
  const result = await db.raw<{ rows: ChallengeRow[] }>(
    `UPDATE auth_challenges SET used_at = now()
      WHERE nonce = ? AND chain_kind = ? AND address = ? AND (?::text IS NULL OR message = ?)
        AND used_at IS NULL AND expires_at > now()
      RETURNING ${COLUMNS.join(', ')}`,
    [expected.nonce, expected.chainKind, expected.address, expected.message, expected.message],
  );
  const row = result.rows[0];
  return row ? toChallenge(row) : null;
}

/** The challenge with this nonce whatever its state, with the database's `now()` to judge expiry by. */
export async function findChallengeByNonce(db: Knex | Knex.Transaction, nonce: string): Promise<{ challenge: ChallengeRecord; now: Date } | null> {
  const result = await db.raw<{ rows: (ChallengeRow & { now: Date })[] }>(
    `SELECT ${COLUMNS.join(', ')}, now() AS now FROM auth_challenges WHERE nonce = ?`,
    [nonce],
  );
  const row = result.rows[0];
  return row ? { challenge: toChallenge(row), now: row.now } : null;
}

/** Deletes challenges that expired more than `graceSeconds` ago; returns how many. */
export async function deleteStaleChallenges(db: Knex | Knex.Transaction, graceSeconds: number): Promise<number> {
  return db('auth_challenges').where('expires_at', '<', db.raw(`now() - make_interval(secs => ?)`, [graceSeconds])).delete();
}
