import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { deleteStaleChallenges } from '../db/repositories/challenges.ts';
import { deleteExpiredIdempotencyKeys } from '../db/repositories/idempotency-keys.ts';
import { deleteExpiredEventStreamTickets } from '../db/repositories/event-stream-tickets.ts';
import { deleteExpiredRateLimits } from '../db/repositories/rate-limits.ts';
import { deleteEndedSessions } from '../db/repositories/sessions.ts';

/** What one purge removed. */
export interface PurgeResult {
  challenges: number;
  sessions: number;
  refreshTokens: number;
  rateLimitCounters: number;
  /** Idempotency-Key answers past their 24 hours (the API's request records, purged with these). */
  idempotencyKeys: number;
  eventStreamTickets: number;
}

export interface AuthPurger {
  /** Deletes expired challenges, ended sessions, expired refresh tokens, ended rate-limit windows, expired idempotency keys and expired stream tickets once. */
  runOnce(): Promise<PurgeResult>;
  /** Runs `runOnce` every `intervalMs` until `stop` (a no-op when the interval is 0). */
  start(): void;
  /** Stops the schedule and waits for a run in progress. */
  stop(): Promise<void>;
}

/**
 * Keeps the sign-in tables small: what can never be used again is deleted on a schedule, not on the
 * request path. Safe to run from every replica at once (each delete is idempotent).
 */
export function createAuthPurger(deps: { knex: Knex; logger: Logger; intervalMs: number }): AuthPurger {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();

  async function runOnce(): Promise<PurgeResult> {
    const challenges = await deleteStaleChallenges(deps.knex, 0);
    const { sessions, refreshTokens } = await deleteEndedSessions(deps.knex);
    const rateLimitCounters = await deleteExpiredRateLimits(deps.knex);
    const idempotencyKeys = await deleteExpiredIdempotencyKeys(deps.knex);
    const eventStreamTickets = await deleteExpiredEventStreamTickets(deps.knex);
    return { challenges, sessions, refreshTokens, rateLimitCounters, idempotencyKeys, eventStreamTickets };
  }

  return {
    runOnce,
    start() {
      if (deps.intervalMs <= 0 || timer) return;
      timer = setInterval(() => {
        running = runOnce().then(
          (removed) => deps.logger.debug(removed, 'purged expired sign-in records'),
          (error: unknown) => deps.logger.warn({ err: error }, 'purging expired sign-in records failed; retrying next interval'),
        );
      }, deps.intervalMs);
      // The schedule alone never keeps a process alive.
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}
