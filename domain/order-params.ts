/**
 * The parameters of one order (architecture.md "Order params"), as signed, hashed and stored with the trade. Addresses are in their own
 * chain's spelling (EVM hex or Stellar strkey), `adId` is the ad's UUID, integers are decimal strings.
 */
export interface OrderParams {
  orderChainToken: string;
  adChainToken: string;
  amount: string;
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

