import type { Notifications } from '../db/notifications.ts';
import type { Principal } from '../domain/principal.ts';

/** The channel the database NOTIFYs, with a session's id, when that session ends or changes (db migration 20261129_6101). */
export const SESSION_CHANGES_CHANNEL = 'session_changes';

/** Sessions one process holds at most: the least recently used goes first. */
export const SESSION_CACHE_MAX_ENTRIES = 10_000;

/**
 * How long an entry is trusted however quiet the channel: the bound on serving a session whose
 * notice was lost on a connection that died without the process seeing it (a half-open TCP connection).
 */
export const SESSION_CACHE_MAX_AGE_MS = 30_000;

export interface SessionCacheOptions {
  maxEntries?: number;
  maxAgeMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

/** What `begin` hands out: a read of the sessions table made under it may be kept only if nothing changed meanwhile. */
export type SessionReadTicket = number;

/** This process's live sessions as last read from PostgreSQL, trusted only while it hears their changes. */
export interface SessionCache {
  /** The principal of a live session of `userId` held here, or undefined (not held, stale, or not trusted now). */
  get(sessionId: string, userId: string): Principal | undefined;
  /** Call before reading a session from the database; pass the ticket to `put` with what was read. */
  begin(): SessionReadTicket;
  /**
   * Keeps a live session read under `ticket` until `sessionEndsAt` (its absolute end) at the latest:
   * dropped when a change of any session was heard, or the connection dropped, since `begin`
   * (the read may predate that change), and never while the LISTEN connection is down.
   */
  put(ticket: SessionReadTicket, principal: Principal, sessionEndsAt: Date): void;
  /** Drops a session this process itself just ended (before its own notice comes back). */
  forget(sessionId: string): void;
  /** Whether entries are served now: the LISTEN connection is up and listening on the channel. */
  trusted(): boolean;
  /** Sessions held. */
  readonly size: number;
  /** Stops listening and empties the cache; nothing is served after. */
  close(): void;
}

interface Entry {
  principal: Principal;
  /** Epoch ms after which the entry is not served: the session's end, or `maxAgeMs` after it was read. */
  until: number;
}

/**
 * A per-process cache of live sessions that is safe across processes: every change of a session
 * (revoked, deleted, its user's wallets changed) is NOTIFYed by the database in the transaction that
 * makes it, and each process drops the entry when it hears it. Entries are served only while the
 * process's LISTEN connection (`notifications`, shared) is up: on a drop the cache is emptied and
 * bypassed, and emptied again when it is back (notices sent meanwhile are lost). An entry never
 * outlives the session's end nor `maxAgeMs`, and at most `maxEntries` are held (least recently used
 * evicted), so no client can grow it without bound. Only live sessions are held: a refusal is always
 * read from the database. It starts listening on its first lookup (served from the database until
 * the LISTEN connection is up).
 */
export function createSessionCache(notifications: Notifications, options: SessionCacheOptions = {}): SessionCache {
  const maxEntries = options.maxEntries ?? SESSION_CACHE_MAX_ENTRIES;
  const maxAgeMs = options.maxAgeMs ?? SESSION_CACHE_MAX_AGE_MS;
  const now = options.now ?? Date.now;
  // Map iteration order is insertion order: re-inserting on each hit keeps the least recently used first.
  const entries = new Map<string, Entry>();
  let listening = false;
  let closed = false;
  // Bumped by every change heard, every connect and every drop: a read begun under an older epoch may be stale.
  let epoch = 0;
  const invalidateAll = () => {
    epoch += 1;
    entries.clear();
  };
  let stop: (() => void) | undefined;
  // Listening begins with the first lookup: a process that authenticates nobody opens no connection for it.
  const listen = () => {
    if (stop || closed) return;
    try {
      stop = subscribe();
    } catch {
      // The process's connection is closing (shutdown): nothing is served from the cache, every session is read.
    }
  };
  const subscribe = () => notifications.listen(SESSION_CHANGES_CHANNEL, {
    onNotification(sessionId) {
      epoch += 1;
      entries.delete(sessionId);
    },
    onConnected() {
      invalidateAll();
      listening = !closed;
    },
    onDisconnected() {
      listening = false;
      invalidateAll();
    },
  });
  return {
    get(sessionId, userId) {
      listen();
      if (!listening) return undefined;
      const entry = entries.get(sessionId);
      if (!entry) return undefined;
      if (entry.until <= now() || entry.principal.userId !== userId) {
        entries.delete(sessionId);
        return undefined;
      }
      entries.delete(sessionId);
      entries.set(sessionId, entry);
      // A copy: what a request does with its principal never reaches the next request's.
      return { ...entry.principal, wallets: { ...entry.principal.wallets } };
    },
    begin: () => epoch,
    put(ticket, principal, sessionEndsAt) {
      if (!listening || ticket !== epoch) return;
      const until = Math.min(sessionEndsAt.getTime(), now() + maxAgeMs);
      if (until <= now()) return;
      entries.delete(principal.sessionId);
      entries.set(principal.sessionId, { principal: { ...principal, wallets: { ...principal.wallets } }, until });
      while (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    },
    forget(sessionId) {
      epoch += 1;
      entries.delete(sessionId);
    },
    trusted: () => listening,
    get size() {
      return entries.size;
    },
    close() {
      closed = true;
      listening = false;
      invalidateAll();
      stop?.();
    },
  };
}
