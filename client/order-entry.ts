/**
 * The source of the package's `@cross-chain-relayer/client/order` (client/order.js, client/order.d.ts):
 * the order hash a party signs to unlock, computed from `orderParams` alone (`GET /v1/trades/{id}/params`),
 * so a Bridger or Maker who lost the create response can still unlock, on EVM and Stellar alike.
 * `npm run client:generate` bundles it with esbuild (ethers left external) and emits its declarations
 * with TypeScript 5; it is not shipped itself.
 *
 * The work is the service's own: chains/order-hash.ts `computeOrderHash` (the EIP-712 digest of the
 * Order struct, every address as its 32-byte word: EVM left-padded, a Stellar G.../C... strkey's raw
 * 32 bytes; the Soroban contracts hash the same way). client/client.test.ts holds the bundle equal
 * to the service on orders of both chain kinds.
 */
import { computeOrderHash } from '../chains/order-hash.ts';

/** An order as the API returns it (`orderParams`): addresses in their chain's spelling, integers as decimal strings. */
export interface OrderParams {
  orderChainToken: string;
  adChainToken: string;
  amount: string;
  orderAmount: string;
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
  lockExpiry: string;
  refundTime: string;
}

/** The EIP-712 domain's name and version the service hashes orders under (its EIP712_DOMAIN_NAME / _VERSION). */
export interface OrderDomain {
  name: string;
  version: string;
}

/** The service's default domain: `ProofBridge`, version `1`. */
export const DEFAULT_ORDER_DOMAIN: OrderDomain = { name: 'ProofBridge', version: '1' };

/**
 * The order hash of `orderParams` (0x and 64 lower-case hex digits): the same 32 bytes the API
 * returns as `orderHash`, that the contracts of both chains compute and that the unlock's wallet
 * signature covers. `orderParams` may be a `/params` answer (its extra `orderHash` is ignored).
 * Throws on a field the order cannot hold (an address of neither kind, `amount` unlike `orderAmount`).
 */
export function orderHashOf(orderParams: OrderParams, domain: OrderDomain = DEFAULT_ORDER_DOMAIN): string {
  const { orderChainToken, adChainToken, amount, orderAmount, adAmount, bridger, orderRecipient, adId, adCreator, adRecipient, salt, orderChainId, orderPortal, adChainId, adManager, lockExpiry, refundTime } = orderParams;
  return computeOrderHash(
    { orderChainToken, adChainToken, amount, orderAmount, adAmount, bridger, orderRecipient, adId, adCreator, adRecipient, salt, orderChainId, orderPortal, adChainId, adManager, lockExpiry, refundTime },
    domain,
  );
}
