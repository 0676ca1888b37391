import type { Principal } from '../../domain/principal.ts';
import { assertAdmitted } from '../port.ts';
import { admitRequest } from '../request-machine.ts';
import type { AdContext } from './context.ts';
import { changeOwnAd } from './own-ad.ts';
import { assertRequestRoom, recipient, recordAdRequest, signAdRequest, type SignedAdRequest } from './requests.ts';

/**
 * `POST /v1/ads/:id/close`: signed `closeAd` call data: the whole available balance goes to `to`
 * and the ad closes for good. Refused while trades hold reservations (their Bridgers would wait
 * for a refund); from now on no trade can reserve against the ad.
 */
export function closeAd(ctx: AdContext) {
  return async (principal: Principal, adId: string, to: string): Promise<SignedAdRequest<'closeAd'>> => {
    let signed!: SignedAdRequest<'closeAd'>;
    await changeOwnAd(ctx, principal, adId, async (trx, ad, chain, balances) => {
      const payout = recipient('to', chain, to);
      const admission = admitRequest({ id: ad.id, baseStatus: ad.baseStatus, balances }, { action: 'closeAd' });
      assertAdmitted(admission);
      await assertRequestRoom(ctx, trx, principal, false);
      signed = await signAdRequest(ctx, chain, 'closeAd', { adId, to: payout }, 'to');
      const held = admission.hold!;
      await recordAdRequest(trx, adId, 'closeAd', signed, chain, null, payout, held.toString());
      return { operations: [{ op: 'hold', amount: held }] };
    });
    return signed;
  };
}
