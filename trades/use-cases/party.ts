import type { Principal } from '../../domain/principal.ts';
import type { ChainEventRecord } from '../../db/repositories/chain-events.ts';
import {
  findTradeLifecycle, findTradeWithDeposit, findTradeWithRecordedEvents, type RecordedBlock, type TradeLifecycleRecord,
} from '../../db/repositories/trade-lifecycle.ts';
import { TradeNotFoundError } from '../lifecycle/errors.ts';
import { chainFact, type Role } from '../lifecycle/index.ts';
import { NotTradePartyError, TradeNotReadyError } from '../errors.ts';
import type { TradeContext } from './context.ts';

/** The caller's role in the trade, or `NotTradePartyError` (403). */
export function roleOf(principal: Principal, trade: TradeLifecycleRecord): Role {
  const wallets = Object.values(principal.wallets);
  if (wallets.includes(trade.adCreatorAddress)) return 'maker';
  if (wallets.includes(trade.bridgerAddress)) return 'bridger';
  throw new NotTradePartyError(`only the trade's Bridger and the ad's Maker may do this on trade ${trade.id}`);
}

/** The trade and the caller's role in it: `TradeNotFoundError` (404) or `NotTradePartyError` (403) otherwise. */
export async function partyTrade(ctx: TradeContext, principal: Principal, tradeId: string): Promise<{ trade: TradeLifecycleRecord; role: Role }> {
  const trade = await findTradeLifecycle(ctx.knex, tradeId);
  if (!trade) throw new TradeNotFoundError(tradeId);
  return { trade, role: roleOf(principal, trade) };
}

/**
 * The trade, the caller's role in it, and the chain events recorded for it in a transaction spelled
 * one of `txHashes` (read with it, one statement), for a confirmation: `TradeNotFoundError` (404) or
 * `NotTradePartyError` (403) otherwise.
 */
export async function partyTradeWithRecorded(
  ctx: TradeContext, principal: Principal, tradeId: string, txHashes: readonly string[],
): Promise<{ trade: TradeLifecycleRecord; role: Role; recorded: ChainEventRecord[] }> {
  const found = await findTradeWithRecordedEvents(ctx.knex, tradeId, txHashes);
  if (!found) throw new TradeNotFoundError(tradeId);
  const { recorded, ...trade } = found;
  return { trade, role: roleOf(principal, trade), recorded };
}

/**
 * The trade, the caller's role in it, and its recorded deposit (read with it, one statement), for a
 * request that signs on the deposit: `TradeNotFoundError` (404) or `NotTradePartyError` (403) otherwise.
 */
export async function partyTradeWithDeposit(
  ctx: TradeContext, principal: Principal, tradeId: string,
): Promise<{ trade: TradeLifecycleRecord; role: Role; deposit: RecordedBlock | null }> {
  const found = await findTradeWithDeposit(ctx.knex, tradeId, chainFact('deposit').event);
  if (!found) throw new TradeNotFoundError(tradeId);
  const { deposit, ...trade } = found;
  return { trade, role: roleOf(principal, trade), deposit };
}

/** Before signing on a deposit, it must still be in the order chain's canonical history: `TradeNotReadyError` otherwise. */
export async function assertDepositCanonical(ctx: TradeContext, trade: TradeLifecycleRecord, deposit: RecordedBlock | null): Promise<void> {
  const orderChain = await ctx.chainOf(trade.orderChainId);
  if (!deposit || !orderChain.rpcUrl) return;
  const canonical = await ctx.deps.verifier.isCanonical(
    orderChain,
    { block: deposit.block, blockHash: deposit.blockHash },
  );
  if (!canonical) throw new TradeNotReadyError(`the deposit of trade ${trade.id} is no longer in the order chain's history (reorganised away)`);
}
