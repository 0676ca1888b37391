import type { Knex } from 'knex';

/** What is open against an ad and by a wallet when a new reservation is considered. */
export interface OpenReservations {
  /** Unfunded reservations (trades PENDING, reservation not run out) of this Bridger, on any ad. */
  walletCount: number;
  /** The amount of those reserved in this order-chain token (what the Bridger's balance must cover). */
  walletAmountOfToken: bigint;
  /** Unfunded reservations against this ad, by anyone. */
  adCount: number;
}

/**
 * Serialises reservations by one Bridger for the rest of the transaction `trx`, so two concurrent
 * creates on different ads cannot both pass the per-wallet checks.
 */
export async function lockWalletReservations(trx: Knex.Transaction, bridgerAddress: string): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`reservations:${bridgerAddress}`]);
}

/** The open unfunded reservations of `bridgerAddress` and against `adId` at `now`. */
export async function openReservations(
  knex: Knex,
  query: { bridgerAddress: string; adId: string; orderTokenId: string; now: Date },
): Promise<OpenReservations> {
  const row = await knex('trades')
    .where({ status: 'PENDING' })
    .andWhere('reservation_expires_at', '>', query.now)
    .andWhere((q) => q.where({ bridger_address: query.bridgerAddress }).orWhere({ ad_id: query.adId }))
    .select(
      knex.raw('count(*) filter (where bridger_address = ?)::int as "walletCount"', [query.bridgerAddress]),
      knex.raw(
        'coalesce(sum(amount) filter (where bridger_address = ? and order_token_id = ?), 0)::text as "walletAmountOfToken"',
        [query.bridgerAddress, query.orderTokenId],
      ),
      knex.raw('count(*) filter (where ad_id = ?)::int as "adCount"', [query.adId]),
    )
    .first();
  return { walletCount: row.walletCount, walletAmountOfToken: BigInt(row.walletAmountOfToken), adCount: row.adCount };
}

/** One open unfunded reservation against an ad. */
export interface OpenReservation {
  tradeId: string;
  adId: string;
  bridgerAddress: string;
  amount: bigint;
}

/** The open unfunded reservations (trades PENDING, reservation not run out) against `adId` at `now`, oldest first. */
export async function openReservationsOfAd(knex: Knex, adId: string, now: Date): Promise<OpenReservation[]> {
  const rows: Array<{ tradeId: string; adId: string; bridgerAddress: string; amount: string }> = await knex('trades')
    .select('id as tradeId', 'ad_id as adId', 'bridger_address as bridgerAddress', knex.raw('amount::text as amount'))
    .where({ ad_id: adId, status: 'PENDING' }).andWhere('reservation_expires_at', '>', now)
    .orderBy('created_at');
  return rows.map((row) => ({ ...row, amount: BigInt(row.amount) }));
}

/** An open unfunded reservation of a wallet, with what the OrderPortal knows its order by. */
export interface WalletReservation extends OpenReservation {
  orderHash: string;
  orderPortal: string;
}

/** The open unfunded reservations of `bridgerAddress` in the order token `orderTokenId` at `now`, on any ad. */
export async function openReservationsOfWallet(knex: Knex, bridgerAddress: string, orderTokenId: string, now: Date): Promise<WalletReservation[]> {
  const rows: Array<{ tradeId: string; adId: string; bridgerAddress: string; amount: string; orderHash: string; orderPortal: string }> = await knex('trades')
    .select('id as tradeId', 'ad_id as adId', 'bridger_address as bridgerAddress', knex.raw('amount::text as amount'), 'order_hash as orderHash',
      knex.raw(`order_params->>'orderPortal' as "orderPortal"`))
    .where({ bridger_address: bridgerAddress, order_token_id: orderTokenId, status: 'PENDING' }).andWhere('reservation_expires_at', '>', now)
    .orderBy('created_at');
  return rows.map((row) => ({ ...row, amount: BigInt(row.amount) }));
}
