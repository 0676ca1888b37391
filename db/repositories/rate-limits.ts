import type { Knex } from 'knex';

/** Deletes rate-limit counters whose window has ended; returns how many. */
export async function deleteExpiredRateLimits(db: Knex | Knex.Transaction, now = Date.now()): Promise<number> {
  return db('rate_limits').where('expire', '<', now).delete();
}
