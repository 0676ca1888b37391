import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as adRequests from '../../db/repositories/ad-requests.ts';
import * as ads from '../../db/repositories/ads.ts';
import * as chainEvents from '../../db/repositories/chain-events.ts';
import * as pushedEvents from '../../db/repositories/pushed-events.ts';
import * as lifecycle from '../../db/repositories/trade-lifecycle.ts';
import * as trades from '../../db/repositories/trades.ts';
import * as webhooks from '../../db/repositories/webhooks.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { insertRouteWithChains, type RouteFixture } from '../support/fixtures.ts';

/**
 * The expand/contract rule (db/README "Rollouts"): during a rollout the new schema runs beside the
 * previous release's pods. So, on the schema after the latest migration, (1) the previous
 * release's repository code writes its rows and the new code reads them, and (2) the new code
 * writes rows and the previous release's code reads them. The previous release's repositories are
 * its own source, kept as `git archive` made them (PREVIOUS_RELEASE: no release tags exist, so the commit before
 * this round), in test/fixtures/previous-release-<commit>.tar.gz so that a shallow clone runs the
 * test too (`git archive --format=tar <commit> db domain | gzip -n -9 > ...` makes it at a release),
 * unpacked into .data/ and run as they were.
 */
const PREVIOUS_RELEASE = 'dea51e1';
const root = path.resolve(import.meta.dirname, '..', '..');
const checkout = path.join(root, '.data', `previous-release-${PREVIOUS_RELEASE}`);

// The previous release's modules, loaded at run time: typed loosely on purpose (their types are theirs).
type Module = Record<string, (...args: any[]) => Promise<any>>;
let old: Record<'adRequests' | 'ads' | 'chainEvents' | 'pushedEvents' | 'lifecycle' | 'trades' | 'webhooks', Module>;

describe(`the latest schema with the previous release (${PREVIOUS_RELEASE}) beside the new code`, () => {
  let db: TestDatabase;
  let route: RouteFixture;
  let userId: string;
  const maker = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
  const bridger = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';

  beforeAll(async () => {
    rmSync(checkout, { recursive: true, force: true });
    mkdirSync(checkout, { recursive: true });
    execFileSync('tar', ['-xzf', path.join(root, 'test', 'fixtures', `previous-release-${PREVIOUS_RELEASE}.tar.gz`), '-C', checkout]);
    const load = (name: string) => import(/* @vite-ignore */ path.join(checkout, 'db', 'repositories', `${name}.ts`)) as Promise<Module>;
    old = {
      adRequests: await load('ad-requests'), ads: await load('ads'), chainEvents: await load('chain-events'),
      pushedEvents: await load('pushed-events'), lifecycle: await load('trade-lifecycle'), trades: await load('trades'), webhooks: await load('webhooks'),
    };
    db = await createTestDatabase();
    route = await insertRouteWithChains(db.knex);
    [{ id: userId }] = await db.knex('users').insert({}).returning('id');
    await db.knex('wallets').insert({ user_id: userId, chain_kind: 'EVM', address: maker });
  });
  afterAll(async () => {
    await db?.drop();
    rmSync(checkout, { recursive: true, force: true });
  });

  const newAd = (id: string) => ({
    id, creatorAddress: maker, creatorDstAddress: maker, routeId: route.routeId, adTokenId: route.adTokenId, orderTokenId: route.orderTokenId,
    adChainId: route.adChainId, orderChainId: route.orderChainId, minAmount: null, maxAmount: null, metadata: { name: 'compat' },
  });
  const newTrade = (id: string, adId: string) => ({
    id, routeId: route.routeId, adId, adCreatorAddress: maker, bridgerAddress: bridger, bridgerDstAddress: bridger,
    adChainId: route.adChainId, orderChainId: route.orderChainId, adTokenId: route.adTokenId, orderTokenId: route.orderTokenId, amount: '500',
    orderParams: {
      orderChainToken: '0x' + 'e1'.padStart(40, '0'), adChainToken: '0x' + 'e2'.padStart(40, '0'), amount: '500', orderAmount: '500', adAmount: '500',
      bridger, orderRecipient: maker, adId, adCreator: maker, adRecipient: bridger, salt: '1', orderChainId: route.orderChainId,
      orderPortal: '0x' + '0a'.padStart(40, '0'), adChainId: route.adChainId, adManager: '0x' + '0b'.padStart(40, '0'), lockExpiry: '2000000000', refundTime: '2000003600',
    },
    orderHash: '0x' + randomUUID().replaceAll('-', '').padEnd(64, '0'), secret: '7', secretCommitment: '8',
    reservationExpiresAt: new Date(Date.now() + 3_600_000), lockDeadline: new Date(Date.now() + 7_200_000),
  });
  const adRequest = (adId: string) => ({
    adId, action: 'fundAd', amount: '100', recipient: null, chainId: route.adChainId, contractAddress: '0xc', reqHash: randomUUID(), authToken: randomUUID(),
    deadline: new Date(Date.now() + 600_000), heldAmount: '0',
  });
  const created = (tradeId: string) => ({ type: 'trade.created', data: { tradeId, status: 'PENDING', routeId: route.routeId, amount: '500', orderAmount: '500', adAmount: '500', adCreatorAddress: maker, bridgerAddress: bridger } });

  /** Writes one of everything with `writer`'s repositories; returns the ids. */
  async function writeWith(writer: typeof old) {
    const adId = randomUUID();
    const tradeId = randomUUID();
    await db.knex.transaction(async (trx) => {
      await writer.ads.insertAd!(trx, newAd(adId));
      await trx('ads').where({ id: adId }).update({ base_status: 'ACTIVE', pool_amount: '10000' });
      await writer.lifecycle.insertTrade!(trx, newTrade(tradeId, adId));
      await writer.pushedEvents.appendPushedEvents!(trx, { tradeId, adId, recipients: [maker], events: [created(tradeId)] });
      await writer.adRequests.insertAdRequest!(trx, adRequest(adId));
      await writer.chainEvents.recordChainEvent!(trx, {
        chainId: route.orderChainId, txHash: `0x${tradeId.replaceAll('-', '')}`, logIndex: 0, block: '10', blockHash: '0xbb', event: 'OrderCreated',
        subjectKind: 'trade', subjectId: tradeId, args: {},
      });
    });
    const endpoint = await writer.webhooks.insertWebhookEndpoint!(db.knex, { id: randomUUID(), userId, url: 'https://example.test/h', description: '', secret: 's' }, 100);
    await writer.webhooks.recordAttempt!(db.knex, {
      endpointId: endpoint.id, eventId: '1', seq: 1, messageId: `msg_${tradeId}`, attempt: 1, succeeded: true, statusCode: 200, error: null, durationMs: 3,
    }, { nextAttemptAt: null, disable: null });
    return { adId, tradeId, endpointId: endpoint.id as string };
  }

  /** Reads everything `writeWith` wrote with `reader`'s repositories and checks what a user would see. */
  async function readWith(reader: typeof old, ids: Awaited<ReturnType<typeof writeWith>>) {
    const ad = await reader.ads.findAd!(db.knex, ids.adId);
    expect(ad).toMatchObject({ id: ids.adId, creatorAddress: maker });
    const trade = await reader.trades.findTrade!(db.knex, ids.tradeId);
    expect(trade).toMatchObject({ id: ids.tradeId, amount: '500', status: 'PENDING' });
    const life = await reader.lifecycle.findTradeLifecycle!(db.knex, ids.tradeId);
    expect(life.orderParams).toMatchObject({ amount: '500', orderAmount: '500', adAmount: '500' });
    expect((await reader.lifecycle.openTrades!(db.knex)).some((t: { id: string }) => t.id === ids.tradeId)).toBe(true);
    const replay = await reader.pushedEvents.tradeEventsAfter!(db.knex, ids.tradeId, 0);
    expect(replay.map((e: { type: string; seq: number }) => [e.type, e.seq])).toEqual([['trade.created', 1]]);
    expect((await reader.pushedEvents.userEventsAfter!(db.knex, userId, 0)).some((e: { tradeId: string }) => e.tradeId === ids.tradeId)).toBe(true);
    expect((await reader.adRequests.requestsOfAd!(db.knex, ids.adId))).toHaveLength(1);
    expect(await reader.chainEvents.findSubjectEvent!(db.knex, 'trade', ids.tradeId, route.orderChainId, 'OrderCreated')).toMatchObject({ block: '10' });
    const deliveries = await reader.webhooks.listWebhookDeliveries!(db.knex, ids.endpointId, 10);
    expect(deliveries.items.map((d: { messageId: string }) => d.messageId)).toEqual([`msg_${ids.tradeId}`]);
  }

  const current = () => ({ adRequests, ads, chainEvents, pushedEvents, lifecycle, trades, webhooks }) as unknown as typeof old;

  it('the previous release writes ads, trades, pushed events, ad requests, chain events and webhook deliveries, and the new code reads them', async () => {
    await readWith(current(), await writeWith(old));
  });

  it('the new code writes them, and the previous release (its pods still serving during the rollout) reads them', async () => {
    await readWith(old, await writeWith(current()));
  });

  it('has teeth: a contract step in the same release (a column the previous release writes, renamed) fails it', async () => {
    const trx = await db.knex.transaction();
    try {
      await trx.raw('ALTER TABLE ads RENAME COLUMN metadata TO details');
      await expect(old.ads.insertAd!(trx, newAd(randomUUID()))).rejects.toThrow(/column "metadata" of relation "ads" does not exist/);
    } finally {
      await trx.rollback();
    }
  });
});
