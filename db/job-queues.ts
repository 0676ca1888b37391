import { createRequire } from 'node:module';
import type { Knex } from 'knex';
import pg from 'pg';
import PgBoss from 'pg-boss';
import type { Logger } from 'pino';

/**
 * pg-boss 10's work loop calls `complete` and `fail` without awaiting them (manager.js `work`):
 * when PostgreSQL is down or restarting at that moment the rejection is unhandled and Node ends
 * the process (seen in `npm run chaos`: an api process died at a PostgreSQL restart). Every
 * promise they return is given a handler here that reports the error as pg-boss's own `error`
 * event (logged by `startJobQueues`); the job stays active until it expires and pg-boss retries it.
 * Callers that await these still get the rejection. 10.4.2 is the last pg-boss 10; 11 changes the API.
 */
const Manager = createRequire(import.meta.url)('pg-boss/src/manager.js') as {
  prototype: Record<'complete' | 'fail', (...args: unknown[]) => Promise<unknown>> & {
    emit(event: string, error: unknown): boolean;
    listenerCount(event: string): number;
  };
};
for (const name of ['complete', 'fail'] as const) {
  const original = Manager.prototype[name];
  Manager.prototype[name] = function (this: typeof Manager.prototype, ...args: unknown[]) {
    const result = original.apply(this, args);
    result.catch((error: unknown) => {
      if (this.listenerCount('error') > 0) this.emit('error', error);
    });
    return result;
  };
}

/** The pg-boss schema every process of the service shares. */
const SCHEMA = 'pgboss';
/** One cluster-wide lock for creating queues (any fixed 64-bit key; hashed from a name so it reads). */
const CREATE_QUEUES_LOCK = 'pgboss:create-queues';

export type QueueOptions = Omit<PgBoss.Queue, 'name'>;

/**
 * Starts pg-boss on the service's PostgreSQL and makes sure `queues` exist. pg-boss installs its
 * schema under a lock of its own, but `createQueue` takes none: two processes starting at once
 * (the API and a worker, or replicas after a rollout) each create a queue's partition and attach
 * a foreign key to the shared job table, and PostgreSQL can answer one of them "deadlock
 * detected", failing that process's start. So queues are created one process at a time under a
 * session advisory lock, and a queue that already exists is left as it is.
 */
export async function startJobQueues(options: {
  databaseUrl: string; max: number; logger: Logger; label: string; queues: Record<string, QueueOptions>;
}): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: options.databaseUrl, schema: SCHEMA, max: options.max });
  boss.on('error', (error) => options.logger.error({ err: error }, `pg-boss error (${options.label})`));
  await boss.start();
  const missing = [];
  for (const name of Object.keys(options.queues)) if (!(await boss.getQueue(name))) missing.push(name);
  if (missing.length === 0) return boss;
  const lock = new pg.Client({ connectionString: options.databaseUrl });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [CREATE_QUEUES_LOCK]);
    // Another process may have created them while this one waited; create_queue skips an existing name.
    for (const name of missing) await boss.createQueue(name, { name, ...options.queues[name] });
  } finally {
    await lock.end(); // ending the session releases the lock, also after a failed create
  }
  return boss;
}

/** A pg-boss job's state (pg-boss's own names). */
export type JobState = 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';

/**
 * The state of each of `ids` in `queue`, in one query. An id pg-boss no longer holds (never sent,
 * or archived after it finished) is absent from the map.
 */
export async function jobStates(boss: PgBoss, queue: string, ids: readonly string[]): Promise<Map<string, JobState>> {
  if (ids.length === 0) return new Map();
  const result = await boss.getDb().executeSql(
    `SELECT id, state FROM ${SCHEMA}.job WHERE name = $1 AND id = ANY($2::uuid[])`, [queue, ids],
  ) as { rows: { id: string; state: JobState }[] };
  return new Map(result.rows.map((row) => [row.id, row.state]));
}

/**
 * Which of `values` have a job in `queue` that will still run (created, retrying or active) whose
 * `data[field]` is that value, in one query.
 */
export async function valuesWithLiveJobs(boss: PgBoss, queue: string, field: string, values: readonly string[]): Promise<Set<string>> {
  if (values.length === 0) return new Set();
  const result = await boss.getDb().executeSql(
    `SELECT DISTINCT data->>$2 AS value FROM ${SCHEMA}.job WHERE name = $1 AND state < 'completed' AND data->>$2 = ANY($3::text[])`,
    [queue, field, values],
  ) as { rows: { value: string }[] };
  return new Set(result.rows.map((row) => row.value));
}

/**
 * pg-boss's `db` option over a knex transaction's own connection: a job sent or cancelled with it
 * is part of that transaction, so it exists (or is cancelled) exactly when the transaction commits.
 */
export async function jobsWithin(trx: Knex.Transaction): Promise<PgBoss.Db> {
  // Inside a transaction knex's client hands out the transaction's connection (and never releases it).
  const connection = (await trx.client.acquireConnection()) as pg.ClientBase;
  return { executeSql: async (text, values) => connection.query(text, values) };
}
