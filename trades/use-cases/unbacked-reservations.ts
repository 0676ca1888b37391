import type { Knex } from 'knex';
import type { OrderChainReader } from '../../chains/order-chain.ts';
import type { ChainConnection } from '../../db/repositories/registry-cache.ts';
import { openReservationsOfAd, openReservationsOfWallet, type WalletReservation } from '../../db/repositories/reservations.ts';

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
 * (balance cycling). So each wallet holding a reservation against the ad is read again:
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

/** What the re-read of an ad asks: the order chain and token its reservations are in, and the moment. */
export interface RecheckRequest {
  adAmount: bigint;
  maxOpenPerAd: number;
  orderChain: ChainConnection;
  orderToken: string;
  now: Date;
}

/**
 * `releaseUnbackedReservations` for a Bridger who finds an ad taken (read without a lock: its
 * available balance short of `adAmount`, or MAX_OPEN_RESERVATIONS_PER_AD reached), at most once per
 * `intervalMs` per ad in this process: a request while one runs waits for it and shares its outcome,
 * a request within `intervalMs` of the last one's start re-reads nothing (each re-read costs
 * a balance read per holding wallet and an order read per reservation, about 3 RPC calls per wallet,
 * and used to run for every such request).
 *
 * Why a verdict up to `intervalMs` old is safe: the re-read only ever ends reservations (each through
 * `expireReservation`, the OrderPortal asked first), it never grants liquidity. Skipping it leaves the
 * ad's books as they are, and the reservation itself is decided afterwards by the ad's row-locked
 * ledger and the caller's own fresh balance. So a stale "backed" verdict can only keep a reservation
 * whose wallet has since emptied for up to `intervalMs` longer: the asking Bridger is refused (409)
 * or asks again after the window; it can never be given liquidity the ad does not hold.
 */
export function createUnbackedReservationsRecheck(deps: UnbackedReservationsDeps, options: { intervalMs: number; nowMs?: () => number }) {
  const nowMs = options.nowMs ?? Date.now;
  /** Per ad: when its last re-read started, and that re-read while it runs. */
  const recent = new Map<string, { startedAt: number; running?: Promise<number> }>();

  function forgetOld(now: number): void {
    for (const [adId, entry] of recent) if (!entry.running && now - entry.startedAt >= options.intervalMs) recent.delete(adId);
  }

  return {
    /** Reservations ended by the re-read this request ran or joined; 0 when the ad is not taken or was re-read within the window. */
    async releaseIfTaken(
      ad: { id: string; orderTokenId: string; available: bigint; openReservations?: number }, request: RecheckRequest,
    ): Promise<number> {
      // The caller may have counted the ad's open reservations already (create reads them with the
      // wallet's own, at the same instant): that count decides "taken" as a read of them here would.
      const open = ad.openReservations ?? (await openReservationsOfAd(deps.knex, ad.id, request.now)).length;
      if (ad.available >= request.adAmount && open < request.maxOpenPerAd) return 0;
      const now = nowMs();
      const last = recent.get(ad.id);
      if (last?.running) return last.running;
      if (last && now - last.startedAt < options.intervalMs) return 0;
      forgetOld(now);
      // Set before anything is awaited: every concurrent request finds this one running.
      const entry: { startedAt: number; running?: Promise<number> } = { startedAt: now };
      entry.running = releaseUnbackedReservations(deps, ad, request.orderChain, request.orderToken, request.now)
        .finally(() => { entry.running = undefined; });
      recent.set(ad.id, entry);
      return entry.running;
    },
  };
}

export type UnbackedReservationsRecheck = ReturnType<typeof createUnbackedReservationsRecheck>;
