import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { liveSessionIds } from '../../db/repositories/sessions.ts';

/**
 * Ends what a session opened once the session is over (logout, a refresh token's reuse, an
 * operator's revocation, deleted), whichever process revoked it: every `intervalMs`, while anything
 * is watched, one query asks PostgreSQL which of the watched sessions are still live.
 *
 * Why a poll and not a NOTIFY on revocation: sessions live in PostgreSQL and any process (or an
 * operator's SQL) may end one; a notice is lost while the LISTEN connection is down and races a
 * stream being opened (authenticated, not yet subscribed), each needing a re-check of its own. The
 * poll has no such window and costs one primary-key lookup per process per interval, whatever the
 * number of streams. What is delivered in between is gated separately: the event hub reads a user
 * stream's events and its sessions' liveness in one snapshot (db `userEventsForSessions`), so nothing
 * committed after a revocation reaches that session's stream.
 */
export class SessionWatch {
  private readonly watched = new Map<string, Set<() => void>>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(private readonly knex: Knex, private readonly intervalMs: number, private readonly logger?: Logger) {}

  /** Calls `ended` once, within about `intervalMs` of the session's end; returns the unwatch. */
  watch(sessionId: string, ended: () => void): () => void {
    let listeners = this.watched.get(sessionId);
    if (!listeners) this.watched.set(sessionId, (listeners = new Set()));
    listeners.add(ended);
    this.timer ??= setInterval(() => void this.check(), this.intervalMs).unref();
    return () => {
      listeners.delete(ended);
      if (listeners.size === 0 && this.watched.get(sessionId) === listeners) this.watched.delete(sessionId);
      if (this.watched.size === 0) this.stop();
    };
  }

  /** Sessions watched in this process. */
  get size(): number {
    return this.watched.size;
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async check(): Promise<void> {
    if (this.checking || this.watched.size === 0) return;
    this.checking = true;
    try {
      const ids = [...this.watched.keys()];
      const live = new Set(await liveSessionIds(this.knex, ids));
      for (const id of ids) {
        if (live.has(id)) continue;
        const listeners = this.watched.get(id);
        this.watched.delete(id);
        for (const ended of listeners ?? []) ended();
      }
      if (this.watched.size === 0) this.stop();
    } catch (error) {
      // PostgreSQL unreachable: keep the streams (they still end at their token's expiry); next tick retries.
      this.logger?.warn({ err: error }, 'event streams: checking their sessions failed, retrying');
    } finally {
      this.checking = false;
    }
  }
}
