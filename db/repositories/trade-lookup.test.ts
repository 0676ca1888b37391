import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db.ts';
import { insertRouteWithChains } from '../../test/support/fixtures.ts';
import { seedAdsAndTrades } from '../../tools/seed-ads.ts';
import { findTrade, listTrades } from './trades.ts';

/**
 * Issue 29: a trade is found by its order hash or by any of its verified transactions, in either
 * chain kind's spelling (EVM `0x` + hex, Stellar bare hex: chains/tx-hash.ts), and carries them.
 */
describe('trades by order hash and transaction', () => {
  let db: TestDatabase;
  let trades: { id: string; order_hash: string; ad_chain_id: string; order_chain_id: string }[];
  const evmTx = `0x${'1a'.repeat(32)}`;
  const stellarTx = '2b'.repeat(32);
  beforeAll(async () => {
    db = await createTestDatabase();
    await insertRouteWithChains(db.knex);
    await seedAdsAndTrades(db.knex, 20);
    trades = await db.knex('trades').select('id', 'order_hash', 'ad_chain_id', 'order_chain_id').orderBy('id').limit(2);
    const event = (tradeId: string, chainId: string, txHash: string, logIndex: number, name: string) => ({
      chain_id: chainId, tx_hash: txHash, log_index: logIndex, block: '1', block_hash: `0x${'00'.repeat(32)}`, event: name, subject_kind: 'trade', subject_id: tradeId,
    });
    // The first trade: a deposit on an EVM chain and a lock in a Stellar transaction; the second shares neither.
    await db.knex('chain_events').insert([
      event(trades[0]!.id, trades[0]!.order_chain_id, evmTx, 0, 'OrderCreated'),
      event(trades[0]!.id, trades[0]!.ad_chain_id, stellarTx, 0, 'OrderLocked'),
      event(trades[1]!.id, trades[1]!.order_chain_id, `0x${'3c'.repeat(32)}`, 0, 'OrderCreated'),
    ]);
  });
  afterAll(async () => { await db.drop(); });

  it('finds a trade by any of its transactions, whatever the chain kind\'s spelling', async () => {
    for (const txHash of [evmTx.slice(2), stellarTx]) {
      const page = await listTrades(db.knex, { txHash }, 25);
      expect(page.items.map((t) => t.id), txHash).toEqual([trades[0]!.id]);
    }
    expect((await listTrades(db.knex, { txHash: '4d'.repeat(32) }, 25)).items).toEqual([]);
  });

  it('finds a trade by its order hash, alone and with other filters', async () => {
    expect((await listTrades(db.knex, { orderHash: trades[1]!.order_hash }, 25)).items.map((t) => t.id)).toEqual([trades[1]!.id]);
    expect((await listTrades(db.knex, { orderHash: trades[1]!.order_hash, txHash: evmTx.slice(2) }, 25)).items).toEqual([]);
  });

  it('carries the order hash and the verified transactions in the order they were applied', async () => {
    const trade = await findTrade(db.knex, trades[0]!.id);
    expect(trade?.orderHash).toBe(trades[0]!.order_hash);
    expect(trade?.transactions).toEqual([
      // Planted without a reporting party: who sent them is not known (null).
      { chainId: trades[0]!.order_chain_id, txHash: evmTx, event: 'OrderCreated', sentBy: null },
      { chainId: trades[0]!.ad_chain_id, txHash: stellarTx, event: 'OrderLocked', sentBy: null },
    ]);
    expect((await findTrade(db.knex, trades[1]!.id))?.transactions).toHaveLength(1);
  });
});
