import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRouteWithChains } from '../test/support/fixtures.ts';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { seedAdsAndTrades } from '../tools/seed-ads.ts';
import { openRestorableTrade, restorableTrades, resumableTrades, storedTradeState } from './resume.ts';

/**
 * What an orchestrator resumes on start, read from the database: every open trade with the timer
 * of its state at its deadline. Over the rows the benches seed (tools/seed-ads.ts), as a service
 * started over them (bench:api, bench:push) reads them.
 */
describe('resumable trades', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await insertRouteWithChains(db.knex);
    await seedAdsAndTrades(db.knex, 40);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('reads seeded open trades with the timer of their state at their deadline', async () => {
    const open = await db.knex('trades').whereIn('status', ['PENDING', 'DEPOSITED', 'LOCKED']).select('id', 'status', 'reservation_expires_at', 'lock_deadline');
    expect(open.length).toBe(30);
    const resumed = new Map((await resumableTrades(db.knex)).map((trade) => [trade.tradeId, trade.followUps]));
    expect(resumed.size).toBe(open.length);
    for (const row of open) {
      const expected = row.status === 'PENDING' ? [{ type: 'ARM_TIMER', event: 'RESERVATION_EXPIRED', at: row.reservation_expires_at.toISOString() }]
        : row.status === 'DEPOSITED' ? [{ type: 'ARM_TIMER', event: 'LOCK_WINDOW_CLOSED', at: row.lock_deadline.toISOString() }]
          : [];
      expect(resumed.get(row.id), `${row.status} trade`).toEqual(expected);
    }
  });

  it('gives what a new run of an open trade resumes from (its start, its state, the same follow-ups), and nothing for a finished or unknown trade', async () => {
    const resumed = new Map((await resumableTrades(db.knex)).map((trade) => [trade.tradeId, trade.followUps]));
    const restorable = await restorableTrades(db.knex);
    expect(restorable.map((r) => r.trade.tradeId).sort()).toEqual([...resumed.keys()].sort());
    for (const { trade, state, followUps } of restorable) {
      const row = await db.knex('trades').where({ id: trade.tradeId }).first('status', 'ad_id', 'route_id', 'reservation_expires_at', 'lock_deadline');
      expect(trade).toEqual({ tradeId: trade.tradeId, adId: row.ad_id, routeId: row.route_id, reservationExpiresAt: row.reservation_expires_at, lockDeadline: row.lock_deadline });
      expect(state.status).toBe(row.status);
      expect(followUps).toEqual(resumed.get(trade.tradeId));
      expect(await openRestorableTrade(db.knex, trade.tradeId)).toEqual({ trade, state, followUps });
    }
    const finished = await db.knex('trades').whereIn('status', ['SETTLED', 'EXPIRED']).first('id', 'status');
    expect(await openRestorableTrade(db.knex, finished.id)).toBeUndefined();
    expect((await storedTradeState(db.knex, finished.id))?.status).toBe(finished.status);
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect(await openRestorableTrade(db.knex, unknown)).toBeUndefined();
    expect(await storedTradeState(db.knex, unknown)).toBeUndefined();
  });

  it('seeds trades a real create would write: order, secret and deadlines set, order hashes distinct', async () => {
    const missing = await db.knex('trades')
      .whereNull('order_params').orWhereNull('order_hash').orWhereNull('secret').orWhereNull('secret_commitment')
      .orWhereNull('reservation_expires_at').orWhereNull('lock_deadline').count({ n: '*' });
    expect(Number(missing[0]!.n)).toBe(0);
  });
});
