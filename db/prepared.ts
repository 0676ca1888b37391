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
 * Runs a statement as a named prepared statement on a pooled connection. PostgreSQL then parses
 * and plans each distinct query shape once per connection instead of on every request; for the
 * list endpoints planning costs more than executing (about 0.18 ms against 0.06 ms for a page of
 * ads), and on a small machine that CPU is shared with the API.
 */
export async function runStatement<Row>(knex: Knex, { name, text }: Statement, values: unknown[]): Promise<Row[]> {
  // Same event knex's own runner emits, so query logging and tests that watch queries still see it.
  knex.client.emit('query', { sql: text, bindings: values, method: 'select', options: {} });
  const connection = (await knex.client.acquireConnection()) as PgConnection;
  try {
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
