import pg from 'pg';

/** What a process learnt when it asked to lead: it leads, another process does, or PostgreSQL cannot be reached. */
export type LeaderRole = 'leading' | 'following' | 'unreachable';

/** A cluster-wide role one process at a time holds (the trade gauges' sampler). */
export interface LeaderLock {
  /**
   * Leads when no other session holds the lock: `leading` while this process's lock session lives
   * (no query once held), `following` when another session holds it, `unreachable` when the
   * session is gone and PostgreSQL does not answer a new one (the role is then unknown: nobody can
   * take it meanwhile, and PostgreSQL drops a dead session's lock, so the first to reconnect leads).
   */
  tryLead(): Promise<LeaderRole>;
  /** Gives the role up (ends the session). */
  release(): Promise<void>;
}

/**
 * A session advisory lock on `name` (hashed to PostgreSQL's 64-bit key), held on a connection of
 * its own: a pooled connection would drop it when returned to the pool. The session ends, and the
 * lock with it, when the process stops or loses its connection. A process that vanishes without
 * closing it (its node lost) would hold the lock until PostgreSQL notices, by default after the
 * OS's 2 hours of TCP keep-alive silence: the session asks for probes after 30 s, every 10 s, 3
 * missed, so another process takes over within about a minute.
 */
export function sessionLeaderLock(databaseUrl: string, name: string, options: { connectTimeoutMs?: number } = {}): LeaderLock {
  let client: pg.Client | undefined;
  let held = false;
  const drop = (dead: pg.Client) => {
    if (client !== dead) return;
    client = undefined;
    held = false;
    dead.end().catch(() => {});
  };
  return {
    async tryLead() {
      if (client && held) return 'leading';
      try {
        if (!client) {
          const fresh = new pg.Client({
            connectionString: databaseUrl,
            keepAlive: true,
            keepAliveInitialDelayMillis: 30_000,
            connectionTimeoutMillis: options.connectTimeoutMs ?? 2_000,
          });
          // A lost connection is an 'error' event: without a listener it would end the process.
          fresh.on('error', () => drop(fresh));
          fresh.on('end', () => drop(fresh));
          client = fresh;
          await fresh.connect();
          await fresh.query('SET tcp_keepalives_idle = 30; SET tcp_keepalives_interval = 10; SET tcp_keepalives_count = 3');
        }
        const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked', [name]);
        held = rows[0]!.locked;
        return held ? 'leading' : 'following';
      } catch {
        if (client) drop(client);
        return 'unreachable';
      }
    },
    async release() {
      const current = client;
      client = undefined;
      held = false;
      await current?.end().catch(() => {});
    },
  };
}
