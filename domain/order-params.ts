/**
 * The parameters of one order (architecture.md "Order params"), as signed, hashed and stored with the trade. Addresses are in their own
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

