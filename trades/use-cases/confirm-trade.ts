import type { TransactionSender } from '../../domain/trade-steps.ts';
import type { Principal } from '../../domain/principal.ts';
import type { ChainEventRecord } from '../../db/repositories/chain-events.ts';
import { findTradeLifecycle, type TradeLifecycleRecord } from '../../db/repositories/trade-lifecycle.ts';
import { txHashSpellings } from '../applier/verify-confirmation.ts';
import { TradeNotFoundError } from '../lifecycle/errors.ts';
import { stateOf } from '../lifecycle/index.ts';
import type { AppliedEvent, ConfirmationKind } from '../orchestrator.ts';
import { applyTradeEvent } from './apply-trade-event.ts';
import type { TradeContext } from './context.ts';
import { partyTradeWithRecorded } from './party.ts';

/**
 * A deposit or lock transaction (`/confirm`), or an unlock (`/unlock/confirm`): the trade read once
 * (with the caller's role, and whatever is already recorded for it in that transaction), verified,
 * applied, the verdict answered.
 */
export function confirmTrade(ctx: TradeContext) {
  return async (principal: Principal, tradeId: string, kind: ConfirmationKind, txHash: string): Promise<AppliedEvent> => {
    const { trade, role, recorded } = await partyTradeWithRecorded(ctx, principal, tradeId, txHashSpellings(txHash));
    return deliverConfirmation(ctx, trade, kind, txHash, role, recorded);
  };
}

/**
 * A transaction no party reported: one the books audit (audit/) found on chain for the trade, or
 * one the relayer's keeper sent (`sentBy: 'relayer'`). Verified and applied exactly like a party's
 * confirmation. Throws `TradeNotFoundError`.
 */
export function confirmFoundTrade(ctx: TradeContext) {
  return async (tradeId: string, kind: ConfirmationKind, txHash: string, sentBy?: TransactionSender): Promise<AppliedEvent> => {
    const trade = await findTradeLifecycle(ctx.knex, tradeId);
    if (!trade) throw new TradeNotFoundError(tradeId);
    return deliverConfirmation(ctx, trade, kind, txHash, sentBy);
  };
}

/**
 * The confirmation's transaction verified on chain (no lock held, the trade as read once), then
 * applied in one transaction and its follow-ups handed to the orchestrator: never a round trip
 * through it.
 */
async function deliverConfirmation(
  ctx: TradeContext, trade: TradeLifecycleRecord, kind: ConfirmationKind, txHash: string, sentBy?: TransactionSender,
  recorded?: readonly ChainEventRecord[],
): Promise<AppliedEvent> {
  const { orderHash, adChainId, orderChainId, orderParams } = trade;
  const verified = await ctx.deps.events.verifyConfirmation({
    tradeId: trade.id,
    confirmation: { kind, txHash },
    state: stateOf(trade),
    recorded,
    order: {
      orderHash, adChainId, orderChainId, adManager: orderParams.adManager, orderPortal: orderParams.orderPortal,
      orderAmount: orderParams.orderAmount, adAmount: orderParams.adAmount,
    },
  });
  const chainEvent = verified.chainEvent && sentBy ? { ...verified.chainEvent, sentBy } : verified.chainEvent;
  return applyTradeEvent(ctx, trade, verified.event, chainEvent);
}
