import type { Knex } from 'knex';
import type { OrderChainReader } from '../chains/order-chain.ts';
import type { ChainConnection } from '../db/repositories/registry-cache.ts';
import { openReservationsOfAd, openReservationsOfWallet, type WalletReservation } from '../db/repositories/reservations.ts';

export interface UnbackedReservationsDeps {
  knex: Knex;
  orderChainReader: OrderChainReader;
  /**
   * Ends a reservation now, as its timer would (`RESERVATION_EXPIRED` through the lifecycle's
   * database step: the OrderPortal is asked first, and a deposit that happened keeps it).
   */
  expireReservation(tradeId: string): Promise<unknown>;
}

/**
 * Gives back an ad's unfunded reservations whose Bridgers no longer hold what they promised, for a
 * Bridger who finds the ad taken. A reservation is granted on the order chain's word at that moment
 * (the wallet's balance covering all its open reservations of the token, its allowance covering the
 * deposit); the same tokens moved on to another wallet would back one reservation after another
 * (issue 20's balance cycling). So each wallet holding a reservation against the ad is read again:
 * of its open reservations of the token, those the OrderPortal shows deposited are done with the
 * balance; when the balance no longer covers the rest together, or the allowance one of them, the
 * rest against this ad are ended. What one funded attacker holds against an ad whenever somebody
 * asks is then at most what its wallets hold at that moment. Nothing is ended on a guess: a chain
 * that cannot be read (an RPC outage, no RPC URL) ends nothing. Returns how many reservations ended.
 */
export async function releaseUnbackedReservations(
  deps: UnbackedReservationsDeps,
  ad: { id: string; orderTokenId: string },
  orderChain: ChainConnection,
  orderToken: string,
  now: Date,
): Promise<number> {
  const wallets = new Set((await openReservationsOfAd(deps.knex, ad.id, now)).map((r) => r.bridgerAddress));
  let ended = 0;
  for (const wallet of wallets) {
    const undeposited = await unbacked(deps, orderChain, orderToken, wallet, await openReservationsOfWallet(deps.knex, wallet, ad.orderTokenId, now));
    for (const reservation of undeposited ?? []) {
      if (reservation.adId !== ad.id) continue;
      await deps.expireReservation(reservation.tradeId);
      ended++;
    }
  }
  return ended;
}

/** The wallet's undeposited reservations when its balance or allowance no longer backs them; undefined when backed or unknown. */
async function unbacked(
  deps: UnbackedReservationsDeps, orderChain: ChainConnection, orderToken: string, wallet: string, reservations: WalletReservation[],
): Promise<WalletReservation[] | undefined> {
  try {
    const funding = await deps.orderChainReader.depositFunding(orderChain, orderToken, wallet, orderChain.orderPortalAddress);
    if (!funding) return undefined;
    const undeposited: WalletReservation[] = [];
    for (const reservation of reservations) {
      const state = await deps.orderChainReader.orderState(orderChain, reservation.orderPortal, reservation.orderHash);
      if (state === null) return undefined;
      if (state === 'None') undeposited.push(reservation);
    }
    const owed = undeposited.reduce((sum, r) => sum + r.amount, 0n);
    const largest = undeposited.reduce((max, r) => (r.amount > max ? r.amount : max), 0n);
    const backed = funding.balance >= owed && (funding.allowance === null || funding.allowance >= largest);
    return backed ? undefined : undeposited;
  } catch {
    return undefined; // the chain cannot tell now
  }
}

/**
 * `releaseUnbackedReservations` when the ad looks taken for a new reservation of `adAmount` (read
 * without a lock: its available balance short, or MAX_OPEN_RESERVATIONS_PER_AD reached), so the
 * chain is read only when a Bridger would otherwise be turned away.
 */
export async function releaseUnbackedIfTaken(
  deps: UnbackedReservationsDeps,
  ad: { id: string; orderTokenId: string; available: bigint },
  request: { adAmount: bigint; maxOpenPerAd: number; orderChain: ChainConnection; orderToken: string; now: Date },
): Promise<number> {
  const open = await openReservationsOfAd(deps.knex, ad.id, request.now);
  if (ad.available >= request.adAmount && open.length < request.maxOpenPerAd) return 0;
  return releaseUnbackedReservations(deps, ad, request.orderChain, request.orderToken, request.now);
}
