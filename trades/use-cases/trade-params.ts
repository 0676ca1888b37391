import type { Principal } from '../../domain/principal.ts';
import type { TradeContext } from './context.ts';
import { partyTrade } from './party.ts';

/** `GET /v1/trades/:id/params`: the order parameters and the order hash, for either party. */
export function tradeParams(ctx: TradeContext) {
  return async (principal: Principal, tradeId: string) => {
    const { trade } = await partyTrade(ctx, principal, tradeId);
    return { ...trade.orderParams, orderHash: trade.orderHash };
  };
}
