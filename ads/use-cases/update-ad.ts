import type { Principal } from '../../domain/principal.ts';
import type { AdRecord } from '../../db/repositories/ads.ts';
import { operatorAdHold } from '../../db/repositories/operator.ts';
import { AdStateError } from '../errors.ts';
import { assertAdmitted } from '../port.ts';
import { admitUpdate } from '../request-machine.ts';
import type { AdContext } from './context.ts';
import { changeOwnAd } from './own-ad.ts';
import { assertBounds } from './requests.ts';

export interface UpdateAdInput {
  status?: 'ACTIVE' | 'PAUSED';
  minAmount?: string | null;
  maxAmount?: string | null;
  metadata?: unknown;
}

/** `PATCH /v1/ads/:id/update`: status, bounds or metadata; no transaction on chain. Allowed from ACTIVE, PAUSED and EXHAUSTED. */
export function updateAd(ctx: AdContext) {
  return (principal: Principal, adId: string, input: UpdateAdInput): Promise<AdRecord> =>
    changeOwnAd(ctx, principal, adId, async (trx, ad) => {
      assertAdmitted(admitUpdate(ad));
      // The operator's pause (operator/ads.ts) outranks the Maker's: only the operator resumes it.
      if (input.status === 'ACTIVE' && await operatorAdHold(trx, adId)) {
        throw new AdStateError(`ad ${adId} is paused by the operator: it cannot be set ACTIVE until the operator resumes it`);
      }
      const minAmount = input.minAmount !== undefined ? input.minAmount : ad.minAmount;
      const maxAmount = input.maxAmount !== undefined ? input.maxAmount : ad.maxAmount;
      assertBounds(minAmount, maxAmount);
      return { set: { baseStatus: input.status, minAmount: input.minAmount, maxAmount: input.maxAmount, metadata: input.metadata } };
    });
}
