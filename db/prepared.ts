import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/** A read query's SQL with `$n` placeholders and the name it is prepared under, both fixed once. */
export interface Statement {
  name: string;
  text: string;
}

/** Names `text` after its hash: every distinct SQL text is its own prepared statement. */
export function statement(text: string): Statement {
  return { name: `q_${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`, text };
}

/**
 * Reads still waiting for a pooled connection, per pool (knex client) and by statement and values.
 * Attached to the pool, not global: each knex instance has its own.
 */
const waitingReads = new WeakMap<object, Map<string, Promise<unknown[]>>>();

/**
 * Runs a statement as a named prepared statement on a pooled connection. PostgreSQL then parses
 * and plans each distinct query shape once per connection instead of on every request; for the
 * list endpoints planning costs more than executing (about 0.18 ms against 0.06 ms for a page of
 * ads), and on a small machine that CPU is shared with the API.
 *
 * Outside a transaction, a caller asking for exactly the read (statement and values) that another
 * caller's is still waiting for a connection joins it and gets the same rows, which are therefore
 * read-only. This never answers from the past: a read that has not been sent yet takes its
 * snapshot after every caller that joined it had arrived, so each sees every write committed before
 * it asked. Once the read has its connection it takes no one else. When the pool is saturated
 * (many clients polling the same page) one query then serves a queue of requests; when it is
 * not, nothing waits and nothing is shared.
 */
export function runStatement<Row>(knex: Knex, statement: Statement, values: unknown[]): Promise<Row[]> {
  if (knex.isTransaction) return execute<Row>(knex, statement, values);
  let waiting = waitingReads.get(knex.client);
  if (!waiting) waitingReads.set(knex.client, (waiting = new Map()));
  const key = `${statement.name}\u0000${JSON.stringify(values)}`;
  const joined = waiting.get(key);
  if (joined) return joined as Promise<Row[]>;
  const read = execute<Row>(knex, statement, values, () => {
    if (waiting.get(key) === read) waiting.delete(key);
  });
  waiting.set(key, read);
  // A read that fails before it has a connection must not stay joinable.
  read.catch(() => { if (waiting.get(key) === read) waiting.delete(key); });
  return read;
}

/** Runs the statement on a connection of `knex`'s pool (or its transaction's); `onConnection` once it has one. */
async function execute<Row>(knex: Knex, { name, text }: Statement, values: unknown[], onConnection?: () => void): Promise<Row[]> {
  const connection = (await knex.client.acquireConnection()) as PgConnection;
  onConnection?.();
  try {
    // Same event knex's own runner emits, so query logging and tests that watch queries still see it.
    knex.client.emit('query', { sql: text, bindings: values, method: 'select', options: {} });
    const result = await connection.query({ name, text, values });
    return result.rows as Row[];
  } finally {
    await knex.client.releaseConnection(connection);
  }
}

/**
 * Runs a read query built with knex as a prepared statement (see `runStatement`). Compiling the
 * builder costs tens of microseconds per call: hot reads build their `Statement` once instead.
 */
export async function runPrepared<Row>(knex: Knex, builder: Knex.QueryBuilder): Promise<Row[]> {
  const { sql, bindings } = builder.toSQL().toNative();
  return runStatement<Row>(knex, statement(sql), bindings as unknown[]);
}

/**
 * Memoised `statement`: repositories that write their SQL per query shape name each distinct
 * text once. The texts are bounded by the code (which filters are present), never by values.
 */
export function statementCache(): (text: string) => Statement {
  const cache = new Map<string, Statement>();
  return (text) => {
    let found = cache.get(text);
    if (!found) cache.set(text, (found = statement(text)));
    return found;
  };
}
