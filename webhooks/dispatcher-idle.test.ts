import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { startWebhookDispatcher, type WebhookDispatcher } from './dispatcher.ts';

/**
 * Issue 34 (idle CPU): an idle service's webhook delivery costs its PostgreSQL (and itself) little.
 * Its retry queue was polled by four pg-boss workers every 0.5 s (8 queries a second with nothing to
 * deliver, in the API and the worker alike); one poller takes up to four jobs a poll.
 */

let db: TestDatabase;
let dispatcher: WebhookDispatcher;

beforeAll(async () => {
  db = await createTestDatabase();
  dispatcher = await startWebhookDispatcher({
    databaseUrl: db.url, knex: db.knex, logger: pino({ level: 'silent' }),
    settings: {
      timeoutSeconds: 1, publicOnly: false, retryBaseSeconds: 1, retryMaxSeconds: 1,
      disableAfterFailures: 20, disableAfterSeconds: 3600, sweepSeconds: 3600,
    },
  });
}, 60_000);

afterAll(async () => {
  await dispatcher?.close();
  await db?.drop();
});

/** Transactions committed in the test's database so far (PostgreSQL's statistics, flushed about every second by busy sessions). */
async function commits(): Promise<number> {
  const name = new URL(db.url).pathname.slice(1);
  const row = await db.knex('pg_stat_database').where({ datname: name }).first('xact_commit');
  return Number(row.xact_commit);
}

describe('webhook delivery with nothing to deliver', () => {
  it('commits under 6 transactions a second in its database (its queue polled by one worker every 0.5 s, not four)', async () => {
    await new Promise((r) => setTimeout(r, 2_000)); // past the start's own queries
    const before = await commits();
    await new Promise((r) => setTimeout(r, 8_000));
    const perSecond = (await commits() - before) / 8;
    expect(perSecond).toBeGreaterThan(1); // it still polls: a retry that falls due starts within 0.5 s
    expect(perSecond).toBeLessThan(6); // 8.9 a second measured before (four pollers), 4.4 after
  }, 30_000);
});
