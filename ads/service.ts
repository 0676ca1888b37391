import { adContext, type AdsDeps } from './use-cases/context.ts';
import { createAd } from './use-cases/create-ad.ts';
import { fundAd } from './use-cases/fund-ad.ts';
import { withdrawFromAd } from './use-cases/withdraw-from-ad.ts';
import { closeAd } from './use-cases/close-ad.ts';
import { confirmAd } from './use-cases/confirm-ad.ts';
import { updateAd } from './use-cases/update-ad.ts';

export type { AdsDeps, AdsSettings } from './use-cases/context.ts';
export type { CreateAdInput } from './use-cases/create-ad.ts';
export type { UpdateAdInput } from './use-cases/update-ad.ts';
export type { SignedAdRequest } from './use-cases/requests.ts';

/**
 * The Maker's use cases on ads, one file each in ads/use-cases/. Every mutation is the ad
 * creator's alone (the caller's wallet of the ad chain's kind), runs in one transaction holding the
 * ad row lock (ads/port.ts), is admitted by the request machine (ads/request-machine.ts), and
 * changes balances only when the chain has confirmed the matching request.
 */
export function createAdsService(deps: AdsDeps) {
  const ctx = adContext(deps);
  return {
    /** Records a PENDING ad and its create request; returns the signed `createAd` call data. */
    create: createAd(ctx),
    /** Signed `fundAd` call data; the pool grows when its transaction is confirmed. */
    fund: fundAd(ctx),
    /** Signed `withdrawFromAd` call data, its amount held until confirmed or lapsed. */
    withdraw: withdrawFromAd(ctx),
    /** Signed `closeAd` call data, the whole available balance held. */
    close: closeAd(ctx),
    /** Applies a reported transaction to the requests of the ad it answers, once. */
    confirm: confirmAd(ctx),
    /** Status, bounds or metadata. */
    update: updateAd(ctx),
  };
}

export type AdsService = ReturnType<typeof createAdsService>;
