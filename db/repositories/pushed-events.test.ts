import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.ts';
import { appendPushedEvents, PUSHED_EVENTS_CHANNEL, tradeEventsAfter, userEventsAfter } from './pushed-events.ts';
import { insertWebhookEndpoint } from './webhooks.ts';

let db: TestDatabase;
let knex: Knex;

beforeAll(async () => {
  db = await createTestDatabase();
  knex = db.knex;
});
afterAll(async () => db?.drop());

async function user(address: string): Promise<string> {
  const [row] = await knex('users').insert({}).returning('id');
  await knex('wallets').insert({ user_id: row.id, chain_kind: 'EVM', address });
  return row.id;
}

const created = (tradeId: string) => ({
  type: 'trade.proof_ready' as const,
  data: { tradeId, adId: randomUUID(), status: 'DEPOSITED' as const, proofReady: true, bridgerClaimed: false, adCreatorClaimed: false, unlockDue: null },
});

describe('the outbox of pushed events', () => {
  it('numbers a trade\'s events and each user\'s feed 1, 2, 3 with no gap under concurrent writers', async () => {
    const maker = await user(`0x${'a'.repeat(40)}`);
    const bridgers = await Promise.all([1, 2, 3, 4].map((i) => user(`0x${String(i).repeat(40)}`)));
    const trades = bridgers.map(() => randomUUID());
    // Four trades of one Maker written at once, three events each: the Maker's feed interleaves them.
    await Promise.all(trades.flatMap((tradeId, i) => [0, 1, 2].map(() => knex.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [tradeId]); // stands for the trade row lock
      await appendPushedEvents(trx, { tradeId, recipients: [`0x${'a'.repeat(40)}`, `0x${String(i + 1).repeat(40)}`], events: [created(tradeId)] });
    }))));
    for (const tradeId of trades) expect((await tradeEventsAfter(knex, tradeId, 0)).map((e) => e.seq)).toEqual([1, 2, 3]);
    const feed = await userEventsAfter(knex, maker, 0);
    expect(feed.map((e) => e.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    for (const bridger of bridgers) expect((await userEventsAfter(knex, bridger, 0)).map((e) => e.seq)).toEqual([1, 2, 3]);
    expect((await userEventsAfter(knex, maker, 10)).map((e) => e.seq)).toEqual([11, 12]);
  });

  it('publishes nothing from a transaction that rolls back, and announces a commit only once it committed', async () => {
    const tradeId = randomUUID();
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    const notices: string[] = [];
    listener.on('notification', (n) => notices.push(n.payload ?? ''));
    await listener.query(`LISTEN ${PUSHED_EVENTS_CHANNEL}`);
    await expect(knex.transaction(async (trx) => {
      await appendPushedEvents(trx, { tradeId, recipients: [], events: [created(tradeId)] });
      throw new Error('the state change failed');
    })).rejects.toThrow('the state change failed');
    expect(await tradeEventsAfter(knex, tradeId, 0)).toEqual([]);
    let noticesInsideTransaction = -1;
    await knex.transaction(async (trx) => {
      await appendPushedEvents(trx, { tradeId, recipients: [], events: [created(tradeId), created(tradeId)] });
      await new Promise((resolve) => setTimeout(resolve, 100));
      noticesInsideTransaction = notices.length;
    });
    await expect.poll(() => notices.length).toBe(1);
    await listener.end();
    expect(noticesInsideTransaction).toBe(0);
    expect(JSON.parse(notices[0]!)).toEqual({ tradeId, userIds: [], webhookUserIds: [] });
    expect((await tradeEventsAfter(knex, tradeId, 0)).map((e) => [e.seq, e.type])).toEqual([[1, 'trade.proof_ready'], [2, 'trade.proof_ready']]);
  });

  it('names in its notice, of the users whose feeds grew, those with an active webhook endpoint', async () => {
    const hooked = await user(`0x${'b'.repeat(40)}`);
    const plain = await user(`0x${'c'.repeat(40)}`);
    await insertWebhookEndpoint(knex, { id: randomUUID(), userId: hooked, url: 'https://example.com/hook', description: '', secret: 'whsec_test' }, 10);
    const tradeId = randomUUID();
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    const notices: string[] = [];
    listener.on('notification', (n) => notices.push(n.payload ?? ''));
    await listener.query(`LISTEN ${PUSHED_EVENTS_CHANNEL}`);
    await knex.transaction((trx) => appendPushedEvents(trx, { tradeId, recipients: [`0x${'b'.repeat(40)}`, `0x${'c'.repeat(40)}`], events: [created(tradeId)] }));
    await expect.poll(() => notices.length).toBe(1);
    await listener.end();
    const notice = JSON.parse(notices[0]!);
    expect([...notice.userIds].sort()).toEqual([hooked, plain].sort());
    expect(notice.webhookUserIds).toEqual([hooked]);
  });
});
