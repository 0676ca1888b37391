import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteWebhookDeliveriesBatch, tableSizes } from '../db/repositories/retention.ts';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { insertAd, insertRouteWithChains, insertTrade, type RouteFixture } from '../test/support/fixtures.ts';
import { retentionMetrics } from './metrics.ts';
import { RETAINED_TABLES, runRetention, type RetentionPolicy } from './retention.ts';

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY);
const POLICY: RetentionPolicy = { pushedEventDays: 30, webhookDeliveryDays: 14, chainEventDays: 90, adRequestDays: 90, followUpDays: 30, batchSize: 500 };

/** Seeds `n` rows of each kind the policy deletes, all past every window, in one statement each (PostgreSQL's generate_series). */
async function seedExpired(knex: Knex, tradeId: string, adId: string, userId: string, endpointId: string, n: number): Promise<void> {
  await knex.raw(`INSERT INTO pushed_events (type, trade_id, trade_seq, ad_id, data, created_at)
    SELECT 'trade.updated', NULL, NULL, ?, jsonb_build_object('n', i, 'pad', repeat('x', 200)), now() - interval '60 days' FROM generate_series(1, ?) i`, [adId, n]);
  await knex.raw(`INSERT INTO user_event_feed (user_id, seq, event_id)
    SELECT ?, 1000000 + row_number() OVER (ORDER BY id), id FROM pushed_events WHERE data->>'pad' IS NOT NULL`, [userId]);
  await knex.raw(`INSERT INTO webhook_deliveries (endpoint_id, event_id, seq, message_id, attempt, succeeded, status_code, duration_ms, attempted_at)
    SELECT ?, i, i, 'msg_' || i, 1, true, 200, 12, now() - interval '20 days' FROM generate_series(1, ?) i`, [endpointId, n]);
  await knex.raw(`INSERT INTO chain_events (chain_id, tx_hash, log_index, block, block_hash, event, subject_kind, subject_id, created_at)
    SELECT '1', '0x' || md5('bulk' || i), 0, i::text, '0x' || md5('b' || i), 'OrderSettled', 'trade', ?, now() - interval '120 days' FROM generate_series(1, ?) i`, [tradeId, n]);
  await knex.raw(`INSERT INTO trade_follow_ups (trade_id, follow_up, created_at, carried_out_at)
    SELECT ?, jsonb_build_object('type', 'ARM_TIMER', 'n', i), now() - interval '120 days', now() - interval '120 days'
    FROM generate_series(1, ?) i`, [tradeId, n]);
}

/**
 * The retention policy on real PostgreSQL: rows past each window go, in bounded batches; what an
 * open trade, an unsettled request or a lagging webhook endpoint needs stays, however old.
 */
describe('retention', () => {
  let db: TestDatabase;
  let route: RouteFixture;
  let adId: string;
  let openTrade: string;
  let endedLongAgo: string;
  let endedRecently: string;
  let userId: string;
  let activeEndpoint: string;
  const ids: Record<string, number> = {};

  const event = async (name: string, row: Record<string, unknown>) => {
    const [inserted] = await db.knex('pushed_events').insert({ type: 'trade.updated', data: JSON.stringify({ name }), ...row }).returning('id');
    ids[name] = Number(inserted.id);
    return ids[name]!;
  };
  const chainEvent = (name: string, subjectKind: string, subjectId: string, createdAt: Date) => db.knex('chain_events').insert({
    chain_id: '1', tx_hash: `0x${name}`, log_index: 0, block: '1', block_hash: '0xb', event: 'E', subject_kind: subjectKind, subject_id: subjectId, created_at: createdAt,
  });
  const followUp = async (name: string, tradeId: string, createdAt: Date, carriedOutAt: Date | null) => {
    const [row] = await db.knex('trade_follow_ups').insert({
      trade_id: tradeId, follow_up: JSON.stringify({ type: 'PROVE', name }), created_at: createdAt, carried_out_at: carriedOutAt,
    }).returning('seq');
    return Number(row.seq);
  };
  const adRequest = async (status: string, createdAt: Date) => {
    const [row] = await db.knex('ad_requests').insert({
      ad_id: adId, action: 'fundAd', amount: '1', chain_id: '1', contract_address: '0xc', req_hash: randomUUID(), auth_token: randomUUID(),
      deadline: createdAt, status, tx_hash: status === 'CONFIRMED' ? `0x${randomUUID()}` : null, created_at: createdAt,
    }).returning('id');
    return row.id as string;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    route = await insertRouteWithChains(db.knex);
    adId = await insertAd(db.knex, route);
    openTrade = await insertTrade(db.knex, route, adId, { status: 'DEPOSITED', created_at: ago(200), updated_at: ago(200) });
    endedLongAgo = await insertTrade(db.knex, route, adId, { status: 'SETTLED', created_at: ago(200), updated_at: ago(100) });
    endedRecently = await insertTrade(db.knex, route, adId, { status: 'EXPIRED', created_at: ago(200), updated_at: ago(5) });
    [{ id: userId }] = await db.knex('users').insert({}).returning('id');
    activeEndpoint = randomUUID();
    await db.knex('webhook_endpoints').insert({ id: activeEndpoint, user_id: userId, url: 'https://example.test/hook', secret: 's', delivered_seq: 1 });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('deletes what is past its window and keeps what an open trade, a recently ended one, an unsettled request or a lagging endpoint needs', async () => {
    await event('openTrade', { trade_id: openTrade, trade_seq: 1, created_at: ago(200) });
    await event('endedLongAgo', { trade_id: endedLongAgo, trade_seq: 1, created_at: ago(100) });
    await event('endedRecently', { trade_id: endedRecently, trade_seq: 1, created_at: ago(100) });
    await event('oldAdEvent', { ad_id: adId, created_at: ago(40) });
    await event('recentAdEvent', { ad_id: adId, created_at: ago(10) });
    await event('delivered', { ad_id: adId, created_at: ago(40) });
    await event('undelivered', { ad_id: adId, created_at: ago(40) });
    // The user's feed: seq 1 delivered to the active endpoint, seq 2 not yet (the endpoint is failing).
    await db.knex('user_event_feed').insert([{ user_id: userId, seq: 1, event_id: ids.delivered }, { user_id: userId, seq: 2, event_id: ids.undelivered }]);
    await db.knex('webhook_deliveries').insert([
      { endpoint_id: activeEndpoint, event_id: 1, seq: 1, message_id: 'old', attempt: 1, succeeded: true, duration_ms: 5, attempted_at: ago(15) },
      { endpoint_id: activeEndpoint, event_id: 2, seq: 2, message_id: 'new', attempt: 1, succeeded: false, duration_ms: 5, attempted_at: ago(1) },
    ]);
    const confirmedOld = await adRequest('CONFIRMED', ago(100));
    const expiredOld = await adRequest('EXPIRED', ago(100));
    const pendingOld = await adRequest('PENDING', ago(100));
    const executedOld = await adRequest('EXECUTED', ago(100));
    const confirmedRecent = await adRequest('CONFIRMED', ago(10));
    await chainEvent('open', 'trade', openTrade, ago(200));
    await chainEvent('ended', 'trade', endedLongAgo, ago(100));
    await chainEvent('endedRecently', 'trade', endedRecently, ago(100));
    await chainEvent('confirmed', 'ad_request', confirmedOld, ago(100));
    await chainEvent('executed', 'ad_request', executedOld, ago(100));
    // The follow-ups outbox: an open trade's rows (done long ago, and one pending the sweep still has
    // to carry out), a long-ended trade's done row and its pending one, a recently ended trade's done row.
    const followUps = {
      openDone: await followUp('openDone', openTrade, ago(200), ago(200)),
      openPending: await followUp('openPending', openTrade, ago(200), null),
      endedDone: await followUp('endedDone', endedLongAgo, ago(100), ago(100)),
      endedPending: await followUp('endedPending', endedLongAgo, ago(100), null),
      endedRecentlyDone: await followUp('endedRecentlyDone', endedRecently, ago(100), ago(100)),
    };

    const report = await runRetention(db.knex, POLICY);

    const events = new Set((await db.knex('pushed_events').pluck('id')).map(Number));
    expect(events.has(ids.openTrade!), 'an open trade keeps its replay').toBe(true);
    expect(events.has(ids.endedRecently!), 'a trade ended 5 days ago keeps its replay (30-day window after the end)').toBe(true);
    expect(events.has(ids.recentAdEvent!)).toBe(true);
    expect(events.has(ids.undelivered!), 'an event an active endpoint has yet to deliver stays').toBe(true);
    expect(events.has(ids.endedLongAgo!)).toBe(false);
    expect(events.has(ids.oldAdEvent!)).toBe(false);
    expect(events.has(ids.delivered!)).toBe(false);
    expect(await db.knex('user_event_feed').where({ user_id: userId }).pluck('seq')).toEqual([2]);
    expect(await db.knex('webhook_deliveries').pluck('message_id')).toEqual(['new']);
    expect((await db.knex('chain_events').orderBy('tx_hash').pluck('tx_hash'))).toEqual(['0xendedRecently', '0xexecuted', '0xopen']);
    expect(new Set(await db.knex('ad_requests').pluck('id'))).toEqual(new Set([pendingOld, executedOld, confirmedRecent]));
    expect(expiredOld).toBeDefined();
    const keptFollowUps = new Set((await db.knex('trade_follow_ups').pluck('seq')).map(Number));
    expect(keptFollowUps.has(followUps.openPending), 'a pending row stays: the sweep still has to carry it out').toBe(true);
    expect(keptFollowUps.has(followUps.openDone), 'an open trade keeps all its follow-ups').toBe(true);
    expect(keptFollowUps.has(followUps.endedPending), 'a pending row stays even when its trade ended long ago').toBe(true);
    expect(keptFollowUps.has(followUps.endedRecentlyDone), 'a trade ended 5 days ago keeps its carried-out rows (30-day window after the end)').toBe(true);
    expect(keptFollowUps.has(followUps.endedDone), 'a carried-out row of a trade ended 100 days ago goes').toBe(false);
    expect(report.deleted).toEqual({ pushed_events: 3, webhook_deliveries: 1, chain_events: 2, ad_requests: 2, trade_follow_ups: 1 });
    // Money records and the deposit tree are never retention's: every trade is still there.
    expect(await db.knex('trades').count({ n: '*' }).first()).toEqual({ n: 3 });

    const again = await runRetention(db.knex, POLICY);
    expect(again.deleted).toEqual({ pushed_events: 0, webhook_deliveries: 0, chain_events: 0, ad_requests: 0, trade_follow_ups: 0 });
  });

  it('deletes in batches of at most batchSize rows, each its own statement, and reports sizes before and after (seeded: 20,000 rows a table)', async () => {
    await seedExpired(db.knex, endedLongAgo, adId, userId, activeEndpoint, 20_000);
    // The endpoint has delivered the whole feed: nothing holds the bulk events.
    await db.knex('webhook_endpoints').where({ id: activeEndpoint }).update({ delivered_seq: 10_000_000 });
    expect(await deleteWebhookDeliveriesBatch(db.knex, ago(14), 7)).toBe(7);
    await db.knex.raw('VACUUM ANALYZE');
    const tables = [...RETAINED_TABLES, 'user_event_feed', 'trades', 'merkle_nodes'];
    const before = await tableSizes(db.knex, tables);
    const registry = new Registry();
    const metrics = retentionMetrics(registry);
    const policy = { ...POLICY, batchSize: 1000 };
    const report = await runRetention(db.knex, policy);
    metrics.observe(report);
    // 20,000 rows in four tables in batches of 1,000: 20 full batches for each, plus the short last ones.
    expect(report.batches).toBeGreaterThanOrEqual(4 * 20);
    expect(report.deleted.pushed_events).toBeGreaterThanOrEqual(20_000);
    expect(report.deleted.webhook_deliveries).toBe(20_000 - 7);
    expect(report.deleted.chain_events).toBe(20_000);
    expect(report.deleted.trade_follow_ups).toBe(20_000);
    await db.knex.raw('VACUUM FULL ANALYZE');
    const after = await tableSizes(db.knex, tables);
    const text = await registry.metrics();
    expect(text).toMatch(/relayer_retention_deleted_rows_total\{table="chain_events"\} 20000/);
    expect(text).toMatch(/relayer_retention_deleted_rows_total\{table="trade_follow_ups"\} 20000/);
    expect(text).toMatch(/relayer_retention_last_run_timestamp_seconds \d+/);
    // The figures docs/operations.md quotes ("Retention").
    console.log(JSON.stringify({ before, after, batches: report.batches, durationMs: report.durationMs }, null, 1));
    for (const table of RETAINED_TABLES) expect(after[table]!.rows).toBeLessThan(10);
    expect(after.trades!.rows).toBe(3);
  }, 120_000);
});
