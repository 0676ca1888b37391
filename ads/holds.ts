import type { Knex } from 'knex';
import { expireAdRequests } from '../db/repositories/ad-requests.ts';
import { changeAd } from '../db/repositories/ads.ts';

/**
 * Expires the ad's requests whose confirmation window closed before `cutoff` and gives what they
 * held back to its available balance. The caller holds the ad row lock. Returns the amount released.
 */
export async function releaseExpiredHolds(trx: Knex.Transaction, adId: string, cutoff: Date): Promise<bigint> {
  const released = await expireAdRequests(trx, adId, cutoff);
  if (released > 0n) await changeAd(trx, adId, { withdrawing: -released });
  return released;
}
