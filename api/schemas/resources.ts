import { z } from '../openapi/operations.ts';
import { addressOut, amountOut, chainIdOut, timestamp } from './common.ts';
import { AD_STATUSES, TRADE_STATUSES } from '../../domain/index.ts';
import { TRADE_STEPS, TRANSACTION_SENDERS } from '../../domain/trade-steps.ts';

/** Response schemas of the read API. */

export const chainSchema = z
  .object({
    id: z.string().uuid(),
    name: z.string(),
    chainId: chainIdOut,
    kind: z.enum(['EVM', 'STELLAR']),
    adManagerAddress: addressOut,
    orderPortalAddress: addressOut,
    networkPassphrase: z.string().optional().openapi({
      description: 'Stellar chains only: the network passphrase transactions for this chain are signed with.',
      example: 'Standalone Network ; February 2017',
    }),
    publicRpcUrl: z.string().url().optional().openapi({
      description: 'Stellar chains only, where the operator publishes one: the Soroban RPC URL a client simulates ' +
        'and submits its transactions through (with `networkPassphrase`). Absent: bring your own RPC.',
      example: 'https://soroban-testnet.stellar.org',
    }),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .openapi('Chain');

export const routeTokenSchema = z
  .object({
    id: z.string().uuid(),
    symbol: z.string(),
    name: z.string(),
    address: addressOut.openapi({ description: 'Token contract; the all-zero EVM address for a native token.' }),
    decimals: z.number().int(),
    kind: z.enum(['NATIVE', 'ERC20', 'SEP41']),
    chain: z.object({ id: z.string().uuid(), name: z.string(), chainId: chainIdOut }),
  })
  .openapi('RouteToken');

export const routeSchema = z
  .object({
    id: z.string().uuid(),
    metadata: z.record(z.string(), z.unknown()),
    createdAt: timestamp,
    updatedAt: timestamp,
    adToken: routeTokenSchema,
    orderToken: routeTokenSchema,
    price: z
      .object({
        orderUnits: amountOut.openapi({ description: 'Base units of the order token worth `adUnits` base units of the ad token.' }),
        adUnits: amountOut,
        amountStep: amountOut.openapi({ description: 'A trade `amount` (order token base units) must be a multiple of this to convert exactly.' }),
      })
      .nullable()
      .openapi('RoutePrice', {
        description: "How a deposit converts: a trade's adAmount (what the Maker locks and the Bridger receives, ad " +
          "token base units) is amount x adUnits / orderUnits. Same asset: scaled by the tokens' decimals; otherwise " +
          "the route's stated rate. Null: the route cannot be priced and takes no trades. An addition to the spec's Route.",
      }),
  })
  .openapi('Route');

export const tokenSummarySchema = z
  .object({
    id: z.string().uuid(),
    symbol: z.string(),
    name: z.string(),
    address: addressOut,
    decimals: z.number().int(),
    kind: z.enum(['NATIVE', 'ERC20', 'SEP41']),
    chainId: chainIdOut,
  })
  .openapi('TokenSummary');

export const adSchema = z
  .object({
    id: z.string().uuid(),
    creatorAddress: addressOut,
    routeId: z.string().uuid(),
    adTokenId: z.string().uuid(),
    orderTokenId: z.string().uuid(),
    poolAmount: amountOut.openapi({ description: 'Total ever deposited into the pool.' }),
    availableAmount: amountOut.openapi({ description: 'Unlocked, unreserved balance trades can use now.' }),
    lockedAmount: amountOut.openapi({ description: 'Reserved or locked for trades in progress.' }),
    minAmount: amountOut.nullable(),
    maxAmount: amountOut.nullable(),
    status: z.enum(AD_STATUSES),
    metadata: z.record(z.string(), z.unknown()).nullable().openapi({ description: "The Maker's free-form JSON object; null: none." }),
    adToken: tokenSummarySchema,
    orderToken: tokenSummarySchema,
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .openapi('Ad');

/** An order hash as responses carry it. */
export const orderHashOut = z.string().openapi({
  pattern: '^0x[0-9a-f]{64}$',
  description: 'The EIP-712 hash of the order (both chains, the signatures and the proof carry it); the client computes it with orderHashOf(orderParams).',
});

/** One verified step of a trade on chain. */
export const tradeTransactionSchema = z
  .object({
    step: z.enum(TRADE_STEPS).openapi({
      description: 'deposit (createOrder, order chain), lock (lockForOrder, ad chain), adUnlock (the ad-chain ' +
        'unlock, pays the Bridger), orderUnlock (the order-chain unlock, pays the Maker), lockRelease (releaseLock ' +
        'after lockExpiry, ad chain), refund (the deposit back to the Bridger after refundTime, order chain).',
    }),
    chainId: chainIdOut,
    txHash: z.string().openapi({ pattern: '^(0x)?[0-9a-f]{64}$', description: 'EVM: 0x and lower-case hex; Stellar: lower-case hex.' }),
    sentBy: z.enum(TRANSACTION_SENDERS).optional().openapi({
      description: 'Who sent it: bridger or maker (the party that reported it), relayer (the service\'s keeper, for a party that ' +
        'did not). Absent when nobody reported it and the books audit found it on chain.',
    }),
  })
  .openapi('TradeTransaction');

export const tradeSchema = z
  .object({
    id: z.string().uuid(),
    routeId: z.string().uuid(),
    adId: z.string().uuid(),
    adCreatorAddress: addressOut,
    adChainId: chainIdOut,
    orderChainId: chainIdOut,
    bridgerAddress: addressOut,
    amount: amountOut,
    status: z.enum(TRADE_STATUSES),
    adCreatorClaimed: z.boolean(),
    bridgerClaimed: z.boolean(),
    unlockDue: z.enum(['MAKER', 'BRIDGER']).nullable().openapi({
      description: "Whose unlock is due by default. The order is fixed: MAKER (the ad-chain unlock, AdManager, pays " +
        "the Bridger; the Bridger may take it too) first; BRIDGER (the order-chain unlock, OrderPortal, pays the " +
        "Maker; the Maker may send it too) only once the first is confirmed. null outside LOCKED.",
    }),
    unlockableBy: z.array(z.enum(['MAKER', 'BRIDGER'])).openapi({
      description: 'Who may ask for the unlock in turn (POST /v1/trades/{id}/unlock), its default party first: on ' +
        'the ad side the Maker and the Bridger (with `side: "ad"`; the AdManager pays the Bridger\'s recipient ' +
        'whoever sends it, so an absent Maker cannot keep the Bridger\'s deposit waiting until refundTime), on the ' +
        'order side the Bridger and the Maker. Empty outside LOCKED. Beside the spec. Until the proof is ready the ' +
        'unlock answers 409 with Retry-After.',
      example: ['MAKER', 'BRIDGER'],
    }),
    createdAt: timestamp,
    updatedAt: timestamp,
    ad: z.object({ id: z.string().uuid(), routeId: z.string().uuid(), creatorAddress: addressOut }),
    route: z.object({ id: z.string().uuid(), adToken: routeTokenSchema, orderToken: routeTokenSchema }),
    orderHash: orderHashOut.nullable().openapi({
      description: 'The order hash; every trade the service creates has one (null only on rows older than the stored order).',
    }),
    transactions: z.array(tradeTransactionSchema).openapi({
      description: "The trade's verified transactions, in the order they were applied: what GET /v1/trades/all?txHash= finds it by.",
    }),
  })
  .openapi('Trade');
