import type { Principal } from '../../domain/principal.ts';
import { buildSignedCallData } from '../../chains/signed-call-data.ts';
import { ttlWithin } from '../../chains/timing.ts';
import { lockDeadline, lockDue, stateOf } from '../lifecycle/index.ts';
import { NotTradePartyError, TradeNotReadyError } from '../errors.ts';
import { callTarget, type TradeContext } from './context.ts';
import { assertDepositCanonical, partyTradeWithDeposit } from './party.ts';

/**
 * Signed `AdManager.lockForOrder` call data: the Maker's only, when the machine says the lock is
 * due (`lockDue`), while the lock window is open, and while the deposit is still canonical.
 */
export function lockTrade(ctx: TradeContext) {
  return async (principal: Principal, tradeId: string) => {
    const { trade, role, deposit } = await partyTradeWithDeposit(ctx, principal, tradeId);
    if (role !== 'maker') throw new NotTradePartyError(`only the ad's Maker locks trade ${tradeId}`);
    const due = lockDue(stateOf(trade));
    if ('missing' in due) throw new TradeNotReadyError(`trade ${tradeId}: ${due.missing}`);
    // The signed request must not outlive the lock window.
    const ttl = ttlWithin(lockDeadline({ lockExpiry: trade.orderParams.lockExpiry }), ctx.nowSeconds(), ctx.settings.signedRequestTtlSeconds);
    if (ttl <= 0) throw new TradeNotReadyError(`the lock window of trade ${tradeId} has closed`);
    await assertDepositCanonical(ctx, trade, deposit);
    const adChain = await ctx.chainOf(trade.adChainId);
    const signed = await buildSignedCallData({
      target: callTarget(adChain, trade.orderParams.adManager),
      action: 'lockForOrder',
      fields: { orderHash: trade.orderHash },
      signers: ctx.deps.signers,
      ttlSeconds: ttl,
      now: ctx.nowMs(),
    });
    return { ...signed, orderParams: trade.orderParams, orderHash: trade.orderHash };
  };
}
