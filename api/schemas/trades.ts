import { z } from '../openapi/operations.ts';
import { confirmBody, positiveAmount, signedCallDataShape } from './ads.ts';
import { address, addressOut, amountOut, chainIdOut, shortText, uuid } from './common.ts';
import { orderHashOut } from './resources.ts';

/** Request and response bodies of the trade endpoints. */

export const createTradeBody = z
  .strictObject({
    adId: uuid,
    routeId: uuid.openapi({ description: "Must be the ad's route." }),
    amount: positiveAmount.openapi({ description: "Deposit amount, smallest unit; within the ad's minimum and maximum." }),
    bridgerDstAddress: address('Where the Bridger is paid: an address of the ad chain.', '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC'),
  })
  .openapi('CreateTradeBody', {
    example: {
      adId: '3f0e5a4c-8d7b-4c2a-9e1f-0a1b2c3d4e5f',
      routeId: '0b5a4f8e-2c1d-4d7e-9a3b-6f1e2d3c4b5a',
      amount: '1000000',
      bridgerDstAddress: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
    },
  });

export const orderParamsSchema = z
  .object({
    orderChainToken: addressOut, adChainToken: addressOut,
    amount: amountOut.openapi({ description: "The trade amount: what the Bridger deposits, in the order token's smallest unit (equals orderAmount)." }),
    orderAmount: amountOut.openapi({
      description: "What the OrderPortal takes from the Bridger and pays the Maker, in the order token's smallest " +
        "unit. Part of the order hash.",
    }),
    adAmount: amountOut.openapi({
      description: "What the AdManager locks from the ad and pays the Bridger, in the ad token's smallest unit: " +
        "orderAmount priced by the route (same asset: scaled by the tokens' decimals). Part of the order hash.",
    }),
    bridger: addressOut, orderRecipient: addressOut,
    adId: z.string().uuid(), adCreator: addressOut, adRecipient: addressOut, salt: z.string(), orderChainId: chainIdOut,
    orderPortal: addressOut, adChainId: chainIdOut, adManager: addressOut,
    lockExpiry: z.string().openapi({ description: 'Unix seconds: the ad-chain unlock before it, the Maker may release the lock from it on.' }),
    refundTime: z.string().openapi({ description: 'Unix seconds: the order-chain unlock before it, the Bridger may refund from it on.' }),
  })
  .openapi('OrderParams');

/** GET /v1/trades/{id}/params: the order and its hash, so a party that lost the create response can still sign the unlock. */
export const tradeParamsResponse = orderParamsSchema
  .extend({ orderHash: orderHashOut })
  .openapi('TradeParams');

export const createTradeResponse = z
  .object({
    tradeId: z.string().uuid(),
    reqContractDetails: z.object({
      ...signedCallDataShape,
      orderHash: z.string(),
      secretCommitment: z.string().openapi({ description: 'Poseidon commitment to the relayer-held secret; an argument of createOrder.' }),
      orderParams: orderParamsSchema,
    }),
  })
  .openapi('CreateTradeResponse');

export const lockTradeResponse = z
  .object({ ...signedCallDataShape, orderHash: z.string(), orderParams: orderParamsSchema })
  .openapi('LockTradeResponse');

export const unlockTradeBody = z
  .strictObject({
    signature: shortText(256).openapi({
      description: "Your wallet's signature over the order hash, either its 32 bytes or its lowercase 0x hex as " +
        "text (what Freighter's signMessage and text-only wallets sign): EIP-191 personal_sign on EVM, SEP-53 on " +
        "Stellar (0x hex or base64).",
    }),
    side: z.enum(['ad', 'order'], { error: 'must be ad or order' }).optional().openapi({
      description: 'Beside the spec: which unlock to get. `ad`: AdManager.unlock on the ad chain (pays the ' +
        'Bridger\'s recipient whoever sends it); `order`: OrderPortal.unlock on the order chain (pays the Maker\'s). ' +
        'Default per role, as the spec routes them: the Bridger\'s `order`, the Maker\'s `ad` (`order` once the ad ' +
        'side is confirmed). A Bridger whose Maker does not unlock asks for `ad`.',
    }),
  })
  .openapi(
    'UnlockTradeBody',
    {
      example: {
        signature: '0x5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c5f1c1b',
        side: 'ad',
      },
    },
  );

export const unlockTradeResponse = z
  .object({
    ...signedCallDataShape,
    orderParams: orderParamsSchema,
    nullifierHash: z.string(),
    targetRoot: z.string().openapi({ description: "The order chain's tree root the proof was made against." }),
    proof: z.string().openapi({ description: 'Groth16 proof, abi.encode(uint[2] a, uint[2][2] b, uint[2] c) as 0x hex.' }),
    orderHash: z.string(),
  })
  .openapi('UnlockTradeResponse');

export const confirmTradeBody = confirmBody;
export const confirmTradeResponse = z.object({
  tradeId: z.string().uuid(),
  success: z.boolean(),
  /** Beside the spec's fields: the transaction had been confirmed before and this call changed nothing. */
  duplicate: z.boolean().openapi({ description: 'True when this transaction was already confirmed: nothing changed (the same answer as the first time).' }),
}).openapi('ConfirmTradeResponse');
