import type { Principal } from '../../domain/principal.ts';
import { findSubjectEvent } from '../../db/repositories/chain-events.ts';
import { findTradeLifecycle, type TradeLifecycleRecord } from '../../db/repositories/trade-lifecycle.ts';
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

/** Before signing on a deposit, it must still be in the order chain's canonical history: `TradeNotReadyError` otherwise. */
export async function assertDepositCanonical(ctx: TradeContext, trade: TradeLifecycleRecord): Promise<void> {
  const orderChain = await ctx.chainOf(trade.orderChainId);
  const deposit = await findSubjectEvent(ctx.knex, 'trade', trade.id, orderChain.chainId, chainFact('deposit').event);
  if (!deposit || !orderChain.rpcUrl) return;
  const canonical = await ctx.deps.verifier.isCanonical(
    orderChain,
    { block: deposit.block, blockHash: deposit.blockHash },
  );
  if (!canonical) throw new TradeNotReadyError(`the deposit of trade ${trade.id} is no longer in the order chain's history (reorganised away)`);
}
