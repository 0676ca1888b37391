import type { Knex } from 'knex';
import type { Principal } from '../domain/principal.ts';
import type { Page, RowVersion } from '../db/pagination.ts';
import { findAd, listAds, listAdVersions, type AdFilter, type AdRecord } from '../db/repositories/ads.ts';
import { OwnReadNeedsSignInError } from './errors.ts';

/**
 * Who sees which ads, decided once: a PENDING ad (its create not confirmed on chain yet) is its
 * creator's alone, in lists and by id, and no trade is made against it; every other ad is public.
 * The API presents and caches what these answer; the repository only runs the SQL it is given.
 */

/** The caller of a read, resolved only when the answer depends on it (a Bearer token is checked then, not before). */
export type Reader = () => Promise<Principal | undefined>;

/** Whether a trade can be made against `ad` and whether anyone may see it: its create is confirmed on chain. */
export function isPublished(ad: Pick<AdRecord, 'status'>): boolean {
  return ad.status !== 'PENDING';
}

/** A list of ads as its reader may see it: the filter, and the creators it is narrowed to when the list is the reader's own. */
export interface AdsListScope {
  filter: AdFilter;
  /** Set for a list of the reader's own ads (status=PENDING): only these creators' ads, and the answer is the reader's alone. */
  creators?: string[];
}

/**
 * The scope of a list of ads for `reader`: a list of PENDING ads is the reader's own pending ads
 * (their wallets), and needs a signed-in reader (`OwnReadNeedsSignInError`); any other list is
 * public and, without a status, shows published ads only.
 */
export async function adsListScope(filter: AdFilter, reader: Reader): Promise<AdsListScope> {
  if (filter.status !== 'PENDING') return { filter };
  const principal = await reader();
  if (!principal) throw new OwnReadNeedsSignInError('status=PENDING lists your own pending ads: send your Bearer access token');
  return { filter, creators: Object.values(principal.wallets) };
}

/** The ids and row versions of the page of `scope`: enough to tell whether presentations already made are current. */
export function adVersionsPage(knex: Knex, scope: AdsListScope, limit: number, cursor?: string): Promise<Page<RowVersion>> {
  return listAdVersions(knex, scope.filter, limit, cursor, scope.creators);
}

/** The page of `scope`, newest first. */
export function adsPage(knex: Knex, scope: AdsListScope, limit: number, cursor?: string): Promise<Page<AdRecord>> {
  return listAds(knex, scope.filter, limit, cursor, scope.creators);
}

/**
 * The ad `id` as `reader` may see it, or undefined (not there, or another's pending ad: the same
 * answer, so a pending ad's existence is not told). `own`: the answer is the reader's alone.
 */
export async function visibleAd(knex: Knex, id: string, reader: Reader): Promise<{ ad: AdRecord; own: boolean } | undefined> {
  const ad = await findAd(knex, id);
  if (!ad) return undefined;
  if (isPublished(ad)) return { ad, own: false };
  const principal = await reader();
  if (!principal || !Object.values(principal.wallets).includes(ad.creatorAddress)) return undefined;
  return { ad, own: true };
}
