import type { Knex } from 'knex';

/**
 * The connections that LISTEN for pushed-event commits (the event hub's and the webhook
 * dispatcher's), seen from PostgreSQL, for tests that cut them as a failover or a proxy dropping
 * idle connections would.
 */

/** The backend pids LISTENing on `pushed_events` in `knex`'s database, the caller's own excluded. */
export async function pushedEventListeners(knex: Knex): Promise<number[]> {
  const result = await knex.raw(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN pushed_events' AND pid <> pg_backend_pid()",
  );
  return result.rows.map((row: { pid: number }) => row.pid);
}

/** Ends the backends `pids` (pg_terminate_backend): their clients see the connection die. */
export async function terminateBackends(knex: Knex, pids: number[]): Promise<void> {
  await knex.raw('SELECT pg_terminate_backend(pid) FROM unnest(?::int[]) AS pid', [pids]);
}
