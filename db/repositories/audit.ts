import type { Knex } from 'knex';

/** An ad's stored balances, as the audit compares them with its AdManager. Amounts are decimal strings. */
export interface AuditedAd {
  id: string;
  adChainId: string;
  poolAmount: string;
  paidOutAmount: string;
  lockedAmount: string;
}

/**
 * The ads whose AdManager should hold something: every ad on chain (not PENDING) except closed
 * ones with nothing locked for trades any more.
 */
export async function auditedAds(knex: Knex): Promise<AuditedAd[]> {
  return knex('ads')
    .select('id', 'ad_chain_id as adChainId', 'pool_amount as poolAmount', 'paid_out_amount as paidOutAmount', 'locked_amount as lockedAmount')
    .whereNot('base_status', 'PENDING')
    .andWhere((q) => q.whereNot('base_status', 'CLOSED').orWhere('locked_amount', '>', 0))
    .orderBy('id');
}

/** Per ad, what its EXECUTED requests hold: money the chain paid out whose event is not applied yet. */
export async function executedHolds(knex: Knex): Promise<Map<string, bigint>> {
  const rows: { ad_id: string; held: string }[] = await knex('ad_requests').select('ad_id').sum({ held: 'held_amount' }).where('status', 'EXECUTED').groupBy('ad_id');
  return new Map(rows.map((row) => [row.ad_id, BigInt(row.held)]));
}
