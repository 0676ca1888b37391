import type { Principal } from '../../domain/principal.ts';
import { findTradeLifecycle, type TradeLifecycleRecord } from '../../db/repositories/trade-lifecycle.ts';
import { stateOf } from '../activities.ts';
import { TradeNotFoundError } from '../lifecycle/errors.ts';
import type { AppliedEvent, ConfirmationKind, ConfirmingTrade } from '../orchestrator.ts';
import type { TradeContext } from './context.ts';
import { partyTrade } from './party.ts';

/**
 * A deposit or lock transaction (`/confirm`), or an unlock (`/unlock/confirm`), passed to the
 * orchestrator with the trade as read here (the one read before the database step's locked one).
 */
export function confirmTrade(ctx: TradeContext) {
  return async (principal: Principal, tradeId: string, kind: ConfirmationKind, txHash: string): Promise<AppliedEvent> => {
    const { trade } = await partyTrade(ctx, principal, tradeId);
    return deliverConfirmation(ctx, trade, kind, txHash);
  };
}

/**
 * A transaction the books audit (audit/) found on chain for the trade, which no party reported:
 * verified and applied exactly like a party's confirmation. Throws `TradeNotFoundError`.
 */
export function confirmFoundTrade(ctx: TradeContext) {
  return async (tradeId: string, kind: ConfirmationKind, txHash: string): Promise<AppliedEvent> => {
    const trade = await findTradeLifecycle(ctx.knex, tradeId);
    if (!trade) throw new TradeNotFoundError(tradeId);
    return deliverConfirmation(ctx, trade, kind, txHash);
  };
}

async function deliverConfirmation(ctx: TradeContext, trade: TradeLifecycleRecord, kind: ConfirmationKind, txHash: string): Promise<AppliedEvent> {
  const tradeId = trade.id;
  const confirming = confirmingTrade(trade);
  try {
    return await ctx.deps.orchestrator().confirm(confirming, { kind, txHash });
  } catch (error) {
    // The orchestrator may not have the trade yet (its start failed and the reconciler has not
    // come by): start it now and ask again. Costs a read only on the error path.
    if (!(await ctx.deps.starts.startIfPending(tradeId))) throw error;
    return ctx.deps.orchestrator().confirm(confirming, { kind, txHash });
  }
}

/** What an orchestrator needs of a stored trade to verify and apply a confirmation. */
function confirmingTrade(trade: TradeLifecycleRecord): ConfirmingTrade {
  const { orderHash, adChainId, orderChainId, orderParams } = trade;
  return {
    tradeId: trade.id,
    state: stateOf(trade),
    order: {
      orderHash, adChainId, orderChainId, adManager: orderParams.adManager, orderPortal: orderParams.orderPortal,
      orderAmount: orderParams.orderAmount, adAmount: orderParams.adAmount,
    },
  };
}
