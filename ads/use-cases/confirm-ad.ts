import type { Principal } from '../../domain/principal.ts';
import { applyAnsweredRequests } from '../apply-request.ts';
import { findAnsweredRequests } from '../confirm.ts';
import type { AdContext } from './context.ts';
import { ownAd } from './own-ad.ts';

/**
 * `POST /v1/ads/:id/confirm`: applies the confirmed transaction `txHash` to the ad: finds the
 * requests it answers (verified on the ad chain: contract, event, arguments, finality) and applies
 * each once (ads/apply-request.ts). The same transaction again succeeds and changes nothing.
 */
export function confirmAd(ctx: AdContext) {
  return async (principal: Principal, adId: string, txHash: string): Promise<void> => {
    const { ad, chain } = await ownAd(ctx, principal, adId);
    const found = await findAnsweredRequests({ knex: ctx.knex, verifier: ctx.deps.verifier, chain, ad, txHash });
    if (found.answered.length === 0) return; // a repeat: every request it answers is confirmed
    await ctx.knex.transaction((trx) => applyAnsweredRequests(trx, adId, found.txHash, found.answered));
  };
}
