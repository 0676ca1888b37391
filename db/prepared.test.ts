import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { createKnex } from './knex.ts';
import { runStatement, statement } from './prepared.ts';

/**
 * Concurrent identical reads waiting for a connection share one query, and still see every write
 * committed before they were asked for. A pool of one connection, held by a transaction, makes
 * "waiting for a connection" something the test controls.
 */
describe('runStatement: reads waiting for a connection', () => {
  let db: TestDatabase;
  let pool: Knex;
  const read = statement('select value from shared_reads_probe where id = $1');

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.knex.schema.createTable('shared_reads_probe', (table) => {
      table.integer('id').primary();
      table.text('value').notNullable();
    });
    await db.knex('shared_reads_probe').insert([{ id: 1, value: 'before' }, { id: 2, value: 'other' }]);
    pool = createKnex(db.url, 1);
  });
  afterAll(async () => {
    await pool.destroy();
    await db.drop();
  });

  /** Holds the pool's only connection until the returned function is called. */
  async function holdConnection(): Promise<() => Promise<void>> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    let started!: () => void;
    const acquired = new Promise<void>((resolve) => { started = resolve; });
    const transaction = pool.transaction(async () => {
      started();
      await held;
    });
    await acquired;
    return async () => {
      release();
      await transaction;
    };
  }

  function countQueries(): { count: () => number; stop: () => void } {
    let count = 0;
    const listener = (query: { sql: string }) => { if (query.sql === read.text) count += 1; };
    pool.on('query', listener);
    return { count: () => count, stop: () => pool.off('query', listener) };
  }

  it('sends one query for identical reads that wait together, and sees a write committed while they waited', async () => {
    const release = await holdConnection();
    const queries = countQueries();
    const first = runStatement<{ value: string }>(pool, read, [1]);
    // Committed after the first caller asked and before the second: both must see it.
    await db.knex('shared_reads_probe').where({ id: 1 }).update({ value: 'after' });
    const second = runStatement<{ value: string }>(pool, read, [1]);
    const other = runStatement<{ value: string }>(pool, read, [2]);
    await release();
    expect(await first).toEqual([{ value: 'after' }]);
    expect(await second).toEqual([{ value: 'after' }]);
    expect(await other).toEqual([{ value: 'other' }]);
    // One query for the two identical reads, one for the other values.
    expect(queries.count()).toBe(2);
    queries.stop();
  });

  it('never joins a read that already has its connection', async () => {
    const queries = countQueries();
    const first = runStatement(pool, read, [1]);
    // Let the first read take the free connection and go out.
    await new Promise((resolve) => setImmediate(resolve));
    const second = runStatement(pool, read, [1]);
    await Promise.all([first, second]);
    expect(queries.count()).toBe(2);
    queries.stop();
  });

  it('shares nothing inside a transaction', async () => {
    const queries = countQueries();
    await pool.transaction(async (trx) => {
      await Promise.all([runStatement(trx, read, [1]), runStatement(trx, read, [1])]);
    });
    expect(queries.count()).toBe(2);
    queries.stop();
  });
});
