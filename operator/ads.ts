import type { Knex } from 'knex';
import { AdNotFoundError, AdStateError } from '../ads/errors.ts';
import { withAdLocked } from '../ads/port.ts';
import { deleteOperatorAdHold, insertOperatorAdHold, recordOperatorAction } from '../db/repositories/operator.ts';

/** Who did it and why: every control is audited with both (operator_actions). */
export interface Accountable {
  actor: string;
  reason: string;
}

/**
 * Pauses an ad for the operator, under its row lock with the audit row in the same transaction: the ad
 * becomes PAUSED (it takes no trade; trades already made go on), and the hold keeps the Maker from
 * setting it ACTIVE until `resumeAd`. Returns false when the operator had already paused it.
 */
export async function pauseAd(knex: Knex, adId: string, who: Accountable): Promise<boolean> {
  return knex.transaction(async (trx) => {
    let held = false;
    const ad = await withAdLocked(trx, adId, async ({ ad }) => {
      if (ad.baseStatus === 'PENDING' || ad.baseStatus === 'CLOSED') throw new AdStateError(`ad ${adId} is ${ad.baseStatus}: there is nothing to pause`);
      held = await insertOperatorAdHold(trx, { adId, previousStatus: ad.baseStatus, actor: who.actor, reason: who.reason });
      return { set: { baseStatus: 'PAUSED' } };
    });
    if (!ad) throw new AdNotFoundError(adId);
    await recordOperatorAction(trx, { action: 'pause-ad', subject: adId, actor: who.actor, reason: who.reason });
    return held;
  });
}

/**
 * Takes the operator's hold off an ad and gives it back the status it had when paused (ACTIVE, or PAUSED
 * if its Maker had paused it), audited. `AdStateError` when the operator had not paused it.
 */
export async function resumeAd(knex: Knex, adId: string, who: Accountable): Promise<void> {
  await knex.transaction(async (trx) => {
    const ad = await withAdLocked(trx, adId, async ({ ad }) => {
      const hold = await deleteOperatorAdHold(trx, adId);
      if (!hold) throw new AdStateError(`ad ${adId} is not paused by the operator`);
      return ad.baseStatus === 'PAUSED' ? { set: { baseStatus: hold.previousStatus as 'ACTIVE' | 'PAUSED' } } : {};
    });
    if (!ad) throw new AdNotFoundError(adId);
    await recordOperatorAction(trx, { action: 'resume-ad', subject: adId, actor: who.actor, reason: who.reason });
  });
}
