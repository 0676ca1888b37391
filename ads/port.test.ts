import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAdRequest } from '../db/repositories/ad-requests.ts';
import { findAd } from '../db/repositories/ads.ts';
import { createTestDatabase, type TestDatabase } from '../test/support/db.ts';
import { insertAd, insertRouteWithChains, type RouteFixture } from '../test/support/fixtures.ts';
import { AdStateError, InsufficientLiquidityError } from './errors.ts';
import { applyTradeOperations, reserve, settleLapsedHolds, withAdLocked, type LapsedAnswers } from './port.ts';

let db: TestDatabase;
let knex: Knex;
let route: RouteFixture;

beforeAll(async () => {
  db = await createTestDatabase();
  knex = db.knex;
  route = await insertRouteWithChains(knex);
});
afterAll(async () => db?.drop());

/** A signed request of the ad as the use cases record it, holding `held`, its deadline `ageSeconds` ago. */
async function request(adId: string, action: 'withdrawFromAd' | 'closeAd', held: string, ageSeconds = 3600): Promise<string> {
  await knex.transaction((trx) => insertAdRequest(trx, {
    adId, action, amount: action === 'closeAd' ? null : held, recipient: null, chainId: route.adChainId, contractAddress: '0x' + '1'.repeat(40),
    reqHash: '0x' + randomBytes(32).toString('hex'), authToken: '0x' + randomBytes(32).toString('hex'),
    deadline: new Date(Date.now() - ageSeconds * 1000), heldAmount: held,
  }));
  const row = await knex('ad_requests').where({ ad_id: adId }).orderBy('created_at', 'desc').first('id');
  return row.id;
}

const statusOf = async (id: string) => (await knex('ad_requests').where({ id }).first('status')).status;
const reservation = (adId: string, amount: bigint, lapsed: LapsedAnswers = { adId, answers: new Map() }) =>
  ({ adId, amount, what: `${amount}`, lapsed, closeCutoff: new Date(Date.now() - 60_000) });

describe('the ads port', () => {
  it('settles lapsed holds under the ad lock through the request machine: never ran gives back, ran keeps, settled since stays', async () => {
    const adId = await insertAd(knex, route, { pool_amount: '1000', withdrawing_amount: '600' });
    const neverRan = await request(adId, 'withdrawFromAd', '100');
    const ran = await request(adId, 'withdrawFromAd', '200');
    const confirmedSince = await request(adId, 'withdrawFromAd', '300');
    // Confirmed between the chain's answer and the lock: the lapse no longer concerns it.
    await knex('ad_requests').where({ id: confirmedSince }).update({ status: 'CONFIRMED', tx_hash: '0x' + 'ab'.repeat(32) });
    await settleLapsedHolds(knex, { adId, answers: new Map([[neverRan, false], [ran, true], [confirmedSince, false]]) });
    expect([await statusOf(neverRan), await statusOf(ran), await statusOf(confirmedSince)]).toEqual(['EXPIRED', 'EXECUTED', 'CONFIRMED']);
    const ad = (await findAd(knex, adId))!;
    expect({ withdrawing: ad.withdrawingAmount, available: ad.availableAmount }).toEqual({ withdrawing: '500', available: '500' });
    // Asked again (another caller with the same stale answers): nothing more moves.
    await settleLapsedHolds(knex, { adId, answers: new Map([[neverRan, false]]) });
    expect((await findAd(knex, adId))!.withdrawingAmount).toBe('500');
  });

  it('hands a change the balances after the lapsed holds went back, and writes its operations and settings once', async () => {
    const adId = await insertAd(knex, route, { pool_amount: '1000', withdrawing_amount: '250' });
    const lapsedRequest = await request(adId, 'withdrawFromAd', '250');
    const seen: bigint[] = [];
    const after = await knex.transaction((trx) => withAdLocked(trx, adId, ({ balances }) => {
      seen.push(balances.withdrawing);
      return { operations: [{ op: 'hold', amount: 400n }], set: { baseStatus: 'PAUSED' } };
    }, { adId, answers: new Map([[lapsedRequest, false]]) }));
    expect(seen).toEqual([0n]);
    expect({ withdrawing: after!.withdrawingAmount, available: after!.availableAmount, status: after!.baseStatus }).toEqual({ withdrawing: '400', available: '600', status: 'PAUSED' });
    expect(await knex.transaction((trx) => withAdLocked(trx, randomUUID(), () => ({})))).toBeUndefined();
  });

  it('reserves for a trade only on an ACTIVE ad with no close under way and enough available, changing nothing when it refuses', async () => {
    const paused = await insertAd(knex, route, { base_status: 'PAUSED' });
    await expect(knex.transaction((trx) => reserve(trx, reservation(paused, 1n)))).rejects.toThrow(AdStateError);
    const closing = await insertAd(knex, route, { pool_amount: '1000', withdrawing_amount: '1000' });
    await request(closing, 'closeAd', '1000', -600); // deadline ten minutes ahead: may still be confirmed
    await expect(knex.transaction((trx) => reserve(trx, reservation(closing, 1n)))).rejects.toThrow(/is closing: it takes no trades/);
    const short = await insertAd(knex, route, { pool_amount: '1000', reserved_amount: '950' });
    await expect(knex.transaction((trx) => reserve(trx, reservation(short, 51n)))).rejects.toThrow(InsufficientLiquidityError);
    // The caller's own check refuses: nothing is reserved either.
    await expect(knex.transaction((trx) => reserve(trx, { ...reservation(short, 50n), admit: async () => { throw new Error('wallet cannot pay'); } })))
      .rejects.toThrow('wallet cannot pay');
    expect((await findAd(knex, short))!.reservedAmount).toBe('950');
    await knex.transaction((trx) => reserve(trx, reservation(short, 50n)));
    expect((await findAd(knex, short))!.availableAmount).toBe('0');
  });

  it('serialises concurrent reservations on the ad lock: of 10 at once on an ad covering 3, exactly 3 succeed', async () => {
    const adId = await insertAd(knex, route, { pool_amount: '300' });
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => knex.transaction((trx) => reserve(trx, reservation(adId, 100n)))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason instanceof InsufficientLiquidityError)).toBe(true);
    expect((await findAd(knex, adId))!.reservedAmount).toBe('300');
  });

  it('applies a trade\'s ledger operations in the caller\'s transaction, telling it whether the ad is closed', async () => {
    const open = await insertAd(knex, route, { pool_amount: '1000', locked_amount: '100' });
    const closed = await insertAd(knex, route, { pool_amount: '1000', locked_amount: '100', paid_out_amount: '900', base_status: 'CLOSED' });
    for (const adId of [open, closed]) {
      await knex.transaction((trx) => applyTradeOperations(trx, adId, (ad) => [{ op: ad.closed ? 'payOut' : 'returnLock', amount: 100n }]));
    }
    expect((await findAd(knex, open))!).toMatchObject({ lockedAmount: '0', availableAmount: '1000', paidOutAmount: '0' });
    expect((await findAd(knex, closed))!).toMatchObject({ lockedAmount: '0', availableAmount: '0', paidOutAmount: '1000' });
    // Rolled back with the caller's transaction.
    await expect(knex.transaction(async (trx) => {
      await applyTradeOperations(trx, open, () => [{ op: 'reserve', amount: 10n }]);
      throw new Error('the trade step failed');
    })).rejects.toThrow('the trade step failed');
    expect((await findAd(knex, open))!.reservedAmount).toBe('0');
  });
});

describe('who reaches an ad row', () => {
  it('is the ads port alone: no runtime file outside ads/ locks an ad (changeLockedAd) or settles lapsed requests itself', () => {
    const root = path.resolve(import.meta.dirname, '..');
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        if (['node_modules', 'target', '.git', '.data', 'test'].includes(name) || name.startsWith('.')) continue;
        const file = path.join(dir, name);
        if (statSync(file).isDirectory()) walk(file);
        else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) {
          const relative = path.relative(root, file);
          if (relative.startsWith('ads/') || relative.startsWith('db/')) continue;
          if (/\b(changeLockedAd|askLapsedRequests|settleLapsedInLock)\b/.test(readFileSync(file, 'utf8'))) offenders.push(relative);
        }
      }
    };
    walk(root);
    expect(offenders).toEqual([]);
  });
});
