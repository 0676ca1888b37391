import type { Knex } from 'knex';
import type { Principal } from '../../domain/principal.ts';
import { findAd, type AdRecord } from '../../db/repositories/ads.ts';
import type { ChainConnection } from '../../db/repositories/registry-cache.ts';
import { AdNotFoundError, NotAdCreatorError } from '../errors.ts';
import type { AdBalances } from '../ledger.ts';
import { askLapsedHolds, withAdLocked, type LockedAdChange } from '../port.ts';
import type { AdContext } from './context.ts';

/** The caller's wallet of the chain's kind: who the contract will see as the Maker (`NotAdCreatorError` without one). */
export function makerWallet(principal: Principal, chain: ChainConnection): string {
  const wallet = principal.wallets[chain.kind];
  if (!wallet) throw new NotAdCreatorError(`sign in with (or link) a ${chain.kind} wallet to manage ads on chain ${chain.chainId}`);
  return wallet;
}

/** `NotAdCreatorError` (403) unless the caller's wallet of the ad chain's kind created the ad. */
export function assertCreator(principal: Principal, ad: AdRecord, chain: ChainConnection): void {
  if (principal.wallets[chain.kind] !== ad.creatorAddress) throw new NotAdCreatorError(`only the ad's creator may change ad ${ad.id}`);
}

/** The caller's own ad and its chain, unlocked: `AdNotFoundError` (404) or `NotAdCreatorError` (403) otherwise. */
export async function ownAd(ctx: AdContext, principal: Principal, adId: string): Promise<{ ad: AdRecord; chain: ChainConnection }> {
  const ad = await findAd(ctx.knex, adId);
  if (!ad) throw new AdNotFoundError(adId);
  const chain = await ctx.chainOf(ad.adChainId);
  assertCreator(principal, ad, chain);
  return { ad, chain };
}

/**
 * Changes the caller's own ad in one transaction under its row lock (ads/port.ts `withAdLocked`;
 * 404 unknown, 403 not the creator): first the holds of requests whose confirmation window has
 * closed go back to the available balance, so an abandoned request blocks nothing (the chain is
 * asked about them before the lock is taken); then `decide`, given the ad and its balances after
 * that, returns the ledger operations and settings to apply on top. One lock, one write.
 */
export async function changeOwnAd(
  ctx: AdContext, principal: Principal, adId: string,
  decide: (trx: Knex.Transaction, ad: AdRecord, chain: ChainConnection, balances: AdBalances) => Promise<LockedAdChange> | LockedAdChange,
): Promise<AdRecord> {
  const { chain } = await ownAd(ctx, principal, adId);
  const lapsed = await askLapsedHolds(ctx.knex, ctx.deps.chainState, chain, adId, ctx.confirmCutoff(), ctx.settings.signedRequestTtlSeconds);
  return ctx.knex.transaction(async (trx) => {
    const changed = await withAdLocked(trx, adId, ({ ad, balances }) => decide(trx, ad, chain, balances), lapsed);
    if (!changed) throw new AdNotFoundError(adId);
    return changed;
  });
}
