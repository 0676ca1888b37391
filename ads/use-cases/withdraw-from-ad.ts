import type { Principal } from '../../domain/principal.ts';
import { assertAdmitted } from '../port.ts';
import { admitRequest } from '../request-machine.ts';
import type { AdContext } from './context.ts';
import { changeOwnAd } from './own-ad.ts';
import { assertRequestRoom, recipient, recordAdRequest, signAdRequest, type SignedAdRequest } from './requests.ts';

/**
 * `POST /v1/ads/:id/withdraw`: signed `withdrawFromAd` call data for at most the available balance.
 * The amount is held from now until the transaction is confirmed or the request lapses, so no
 * trade can reserve it.
 */
export function withdrawFromAd(ctx: AdContext) {
  return async (principal: Principal, adId: string, amount: string, to: string): Promise<SignedAdRequest<'withdrawFromAd'>> => {
    let signed!: SignedAdRequest<'withdrawFromAd'>;
    await changeOwnAd(ctx, principal, adId, async (trx, ad, chain, balances) => {
      const payout = recipient('to', chain, to);
      const admission = admitRequest({ id: ad.id, baseStatus: ad.baseStatus, balances }, { action: 'withdrawFromAd', amount: BigInt(amount) });
      assertAdmitted(admission);
      await assertRequestRoom(ctx, trx, principal, false);
      signed = await signAdRequest(ctx, chain, 'withdrawFromAd', { adId, amount, to: payout }, 'poolAmountWithdraw');
      await recordAdRequest(trx, adId, 'withdrawFromAd', signed, chain, amount, payout, amount);
      return { operations: [{ op: 'hold', amount: admission.hold! }] };
    });
    return signed;
  };
}
