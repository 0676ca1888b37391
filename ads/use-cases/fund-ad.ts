import type { Principal } from '../../domain/principal.ts';
import { hasLiveClose } from '../../db/repositories/ad-requests.ts';
import { assertAdmitted } from '../port.ts';
import { admitRequest } from '../request-machine.ts';
import type { AdContext } from './context.ts';
import { changeOwnAd } from './own-ad.ts';
import { assertRequestRoom, recordAdRequest, signAdRequest, type SignedAdRequest } from './requests.ts';

/** `POST /v1/ads/:id/fund`: signed `fundAd` call data, if the request machine admits it; the pool grows when its transaction is confirmed. */
export function fundAd(ctx: AdContext) {
  return async (principal: Principal, adId: string, amount: string): Promise<SignedAdRequest<'fundAd'>> => {
    let signed!: SignedAdRequest<'fundAd'>;
    await changeOwnAd(ctx, principal, adId, async (trx, ad, chain, balances) => {
      const closeUnderWay = await hasLiveClose(trx, ad.id, ctx.confirmCutoff());
      assertAdmitted(admitRequest({ id: ad.id, baseStatus: ad.baseStatus, balances }, { action: 'fundAd', closeUnderWay }));
      await assertRequestRoom(ctx, trx, principal, false);
      signed = await signAdRequest(ctx, chain, 'fundAd', { adId, amount }, 'poolAmountTopUp');
      await recordAdRequest(trx, adId, 'fundAd', signed, chain, amount, null);
      return {};
    });
    return signed;
  };
}
