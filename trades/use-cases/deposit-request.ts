import type { Principal } from '../../domain/principal.ts';
import { keptDepositRequest } from '../../db/repositories/deposit-requests.ts';
import { depositRequestVerdict } from '../lifecycle/index.ts';
import { DepositRequestExpiredError, NotTradePartyError, TradeAlreadyDepositedError } from '../errors.ts';
import type { TradeContext } from './context.ts';
import { partyTrade } from './party.ts';

/**
 * `GET /v1/trades/:id/deposit-request`: the Bridger's signed deposit call data again, exactly as create
 * answered it (only `timeToExpire` is counted again), for a client that lost that answer. It is the
 * request kept with the trade, never a new signature: a second request with another authToken would
 * let a second deposit land for one reservation. Given only while the trade awaits its deposit and
 * before the request's deadline; otherwise `TradeAlreadyDepositedError` or `DepositRequestExpiredError`
 * (409). Anyone but the Bridger: 404 or 403 as the other trade reads.
 */
export function depositRequest(ctx: TradeContext) {
  return async (principal: Principal, tradeId: string) => {
    const { trade, role } = await partyTrade(ctx, principal, tradeId);
    if (role !== 'bridger') throw new NotTradePartyError(`only the Bridger of trade ${trade.id} may get its deposit request`);
    const kept = await keptDepositRequest(ctx.knex, trade.id);
    const verdict = depositRequestVerdict(trade.status, kept?.deadline ?? null, ctx.nowSeconds());
    if (verdict.give) return { tradeId: trade.id, reqContractDetails: { ...kept!, timeToExpire: verdict.secondsLeft } };
    if (verdict.why === 'deposited') {
      throw new TradeAlreadyDepositedError(
        `trade ${trade.id} is already deposited (status ${trade.status}): its deposit request was used; follow the trade instead`,
      );
    }
    if (verdict.why === 'not-kept') {
      // A trade created before requests were kept (a rollout's minutes): its request is not signed again.
      throw new DepositRequestExpiredError(`the deposit request of trade ${trade.id} cannot be given again: replay its create ` +
        'under the same Idempotency-Key, or create a new trade');
    }
    const until = kept ? ` at ${new Date(Number(kept.deadline) * 1000).toISOString()}` : '';
    throw new DepositRequestExpiredError(`the deposit request of trade ${trade.id} expired${until}: no deposit can be made for it now; create a new trade`);
  };
}
