import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { startJobQueues } from './job-queues.ts';

const logger = pino({ level: 'silent' });

describe('startJobQueues', () => {
  let db: TestDatabase;
  beforeAll(async () => { db = await createTestDatabase(); });
  afterAll(async () => { await db.drop(); });

  // CI once failed to start a process with "deadlock detected" from pg-boss's create_queue when
  // the API and the worker started together on a fresh database: starts must not race.
  it('starts many processes at once on a fresh database, each queue created once', async () => {
    const queues = Object.fromEntries(['a', 'b', 'c', 'd'].map((name) => [`race-${name}`, { retryLimit: 2 }]));
    const bosses = await Promise.all(Array.from({ length: 6 }, (_, index) => startJobQueues({
      databaseUrl: db.url, max: 2, logger, label: `process ${index}`, queues,
    })));
    try {
      const created = await db.knex('pgboss.queue').whereIn('name', Object.keys(queues)).select('name', 'retry_limit');
      expect(created.map((row) => row.name).sort()).toEqual(Object.keys(queues).sort());
      expect(created.every((row) => row.retry_limit === 2)).toBe(true);
      await bosses[0]!.send('race-a', { n: 1 });
      const [job] = await bosses[1]!.fetch('race-a');
      expect(job?.data).toEqual({ n: 1 });
    } finally {
      await Promise.all(bosses.map((boss) => boss.stop({ graceful: false, wait: true })));
    }
  }, 60_000);
});
