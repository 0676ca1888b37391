import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKnex } from './knex.ts';
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

  it('keeps the process up when the database goes away while a job is being completed or failed', async () => {
    const name = new URL(db.url).pathname.slice(1);
    const admin = createKnex(inject('postgresAdminUrl'), 1);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const errors: unknown[] = [];
    const boss = await startJobQueues({ databaseUrl: db.url, max: 2, logger, label: 'outage', queues: { outage: { retryLimit: 1 } } });
    boss.on('error', (error) => errors.push(error));
    try {
      let ran = false;
      await boss.work('outage', { pollingIntervalSeconds: 0.5 }, async () => {
        ran = true;
        // The database refuses every connection from now on: pg-boss cannot record the outcome.
        await admin.raw(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
        await admin.raw('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ?', [name]);
        throw new Error('the step failed');
      });
      await boss.send('outage', {});
      for (let i = 0; i < 100 && !(ran && errors.length > 0); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(ran).toBe(true);
      expect(unhandled).toEqual([]);
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      await admin.raw(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await admin.destroy();
      process.off('unhandledRejection', onUnhandled);
      await boss.stop({ graceful: false, wait: true });
    }
  }, 60_000);
});
