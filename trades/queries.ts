import type { Knex } from 'knex';
import type { Page, RowVersion } from '../db/pagination.ts';
import { findTrade, listTrades, listTradeVersions, type TradeFilter, type TradeRecord } from '../db/repositories/trades.ts';

/**
 * Who sees which trades, decided here: a trade is public once created (its parties, amounts, order
 * hash, status and verified transactions are on chain for anyone to read), so every reader sees
 * every trade; what is never shown is read by no query of this module (the deposit secret, the
 * proof's private inputs). The API presents and caches what these answer.
 */

/** The ids and row versions of the page of `filter`: enough to tell whether presentations already made are current. */
export function tradeVersionsPage(knex: Knex, filter: TradeFilter, limit: number, cursor?: string): Promise<Page<RowVersion>> {
  return listTradeVersions(knex, filter, limit, cursor);
}

/** The page of `filter`, newest first. */
export function tradesPage(knex: Knex, filter: TradeFilter, limit: number, cursor?: string): Promise<Page<TradeRecord>> {
  return listTrades(knex, filter, limit, cursor);
}

/** The trade `id` as any reader sees it, or undefined. */
export function visibleTrade(knex: Knex, id: string): Promise<TradeRecord | undefined> {
  return findTrade(knex, id);
}
