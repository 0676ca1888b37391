import type { Knex } from 'knex';
import { idPage, type IdPage, type IdPageResult } from '../pagination.ts';

/** An ad's stored balances, as the audit compares them with its AdManager. Amounts are decimal strings. */
export interface AuditedAd {
  id: string;
  adChainId: string;
  poolAmount: string;
  paidOutAmount: string;
  lockedAmount: string;
}

/**
 * One page (id order, after `page.after`) of the ads whose AdManager should hold something: every
 * ad on chain (not PENDING) except closed ones with nothing locked for trades any more; and how
 * many follow the page.
 */
export async function auditedAdsPage(knex: Knex, page: IdPage): Promise<IdPageResult<AuditedAd>> {
  return idPage(() => knex('ads')
    .select('id', 'ad_chain_id as adChainId', 'pool_amount as poolAmount', 'paid_out_amount as paidOutAmount', 'locked_amount as lockedAmount')
    .whereNot('base_status', 'PENDING')
    .andWhere((q) => q.whereNot('base_status', 'CLOSED').orWhere('locked_amount', '>', 0)), page);
}

/** Per ad of `adIds`, what its EXECUTED requests hold: money the chain paid out whose event is not applied yet. */
export async function executedHolds(knex: Knex, adIds: string[]): Promise<Map<string, bigint>> {
  if (adIds.length === 0) return new Map();
  const rows: { ad_id: string; held: string }[] = await knex('ad_requests').select('ad_id').sum({ held: 'held_amount' })
    .where('status', 'EXECUTED').whereIn('ad_id', adIds).groupBy('ad_id');
  return new Map(rows.map((row) => [row.ad_id, BigInt(row.held)]));
}

/** A phase of the books audit, each sweeping its own subjects with its own cursor. */
export type AuditPhase = 'requests' | 'trades' | 'ad-balances';

/** Where the phase's sweep stopped (the last id it read), or null: the next run starts a new pass. */
export async function auditCursor(knex: Knex, phase: AuditPhase): Promise<string | null> {
  const row: { after_id: string | null } | undefined = await knex('audit_cursors').where({ phase }).first('after_id');
  return row?.after_id ?? null;
}

/** Keeps where the phase stopped (null: it reached the end, the next run starts over). */
export async function saveAuditCursor(knex: Knex, phase: AuditPhase, afterId: string | null): Promise<void> {
  await knex('audit_cursors').insert({ phase, after_id: afterId, updated_at: knex.fn.now() })
    .onConflict('phase').merge(['after_id', 'updated_at']);
}
