/**
 * The parameters of one order, as signed, hashed and stored with the trade. Addresses are in their own
 * chain's spelling (EVM hex or Stellar strkey), `adId` is the ad's UUID, integers are decimal strings.
 */
export interface OrderParams {
  orderChainToken: string;
  adChainToken: string;
  /** The spec's trade amount: what the Bridger deposits, in the order chain's smallest unit. Always equals `orderAmount`. */
  amount: string;
  /** What the Bridger deposits on the order chain (the OrderPortal takes it), in the order token's smallest unit. */
  orderAmount: string;
  /**
   * What the Maker locks and the Bridger receives on the ad chain (the AdManager moves it), in the ad
   * token's smallest unit: `orderAmount` priced by the route (domain/route-pricing.ts).
   */
  adAmount: string;
  bridger: string;
  orderRecipient: string;
  adId: string;
  adCreator: string;
  adRecipient: string;
  salt: string;
  orderChainId: string;
  orderPortal: string;
  adChainId: string;
  adManager: string;
  /** Unix seconds: the Bridger's unlock on the ad chain before it, the Maker's release from it on (chains/timing.ts). */
  lockExpiry: string;
  /** Unix seconds: the Maker's unlock on the order chain before it, the Bridger's refund from it on. */
  refundTime: string;
}


/**
 * An order as stored, in the shape every reader may rely on. Orders created before route pricing
 * (migration 20261124_4001), and orders a pod of that release creates during a rollout after the
 * migration's backfill ran, carry `amount` only: such an order moved `amount` on both chains (1:1
 * in base units), so both amounts are `amount`, exactly as the migration derives them. An order
 * that has its amounts keeps them.
 */
export function orderParamsFromStored<T extends { orderParams: OrderParams | null }>(record: T): T {
  const stored = record.orderParams as (Omit<OrderParams, 'orderAmount' | 'adAmount'> & Partial<OrderParams>) | null;
  if (!stored || (stored.orderAmount !== undefined && stored.adAmount !== undefined)) return record;
  return { ...record, orderParams: { ...stored, orderAmount: stored.orderAmount ?? stored.amount, adAmount: stored.adAmount ?? stored.amount } };
}
