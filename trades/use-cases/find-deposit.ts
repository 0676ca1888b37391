import { adapterOf } from '../../chains/adapters.ts';
import { awaitedDeposits, type AwaitedDeposit } from '../../db/repositories/deposit-requests.ts';
import type { Principal } from '../../domain/principal.ts';
import type { TradeContext } from './context.ts';

/** How many of the caller's trades awaiting their deposit are looked at: more than a wallet may hold (MAX_OPEN_RESERVATIONS_PER_WALLET). */
const AWAITED_LIMIT = 100;

/**
 * The order hash of the caller's own PENDING trade (as its Bridger) that transaction `txHash`
 * deposited, once it is in a block of the order chain, before anyone confirmed it: null when it
 * deposited none of them (or is not in a block yet). Bounded: one transaction read per order chain
 * the caller has such a trade on (none without one), through that chain's adapter, and only the
 * OrderPortal's own event counts, matched to the trade's order hash. A finding, never acted upon:
 * the books move only on a confirmation (`confirm`). `txHash`: 64 hex digits, 0x optional.
 */
export function tradeOfDepositTransaction(ctx: TradeContext) {
  return async (principal: Principal, txHash: string): Promise<string | null> => {
    const awaited = await awaitedDeposits(ctx.knex, Object.values(principal.wallets), AWAITED_LIMIT);
    const byChain = new Map<string, AwaitedDeposit[]>();
    for (const trade of awaited) byChain.set(trade.orderChainId, [...(byChain.get(trade.orderChainId) ?? []), trade]);
    for (const [chainId, trades] of byChain) {
      const chain = await ctx.chainOf(chainId);
      const spelled = adapterOf(chain.kind).canonicalTxHash(txHash);
      if (spelled === undefined) continue;
      const deposited = await ctx.deps.orderChainReader.depositsIn(chain, chain.orderPortalAddress, spelled);
      const found = trades.find((trade) => deposited?.includes(trade.orderHash.toLowerCase()));
      if (found) return found.orderHash;
    }
    return null;
  };
}
