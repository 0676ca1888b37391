import { AD_STATUSES, SETTABLE_AD_STATUSES } from '../../domain/index.ts';
import { z } from '../openapi/operations.ts';
import { address, addressOut, amount, amountOut, chainIdOut, isStorableText, shortText, uuid } from './common.ts';

/** Request and response bodies of the ad mutations. */

/** A positive amount in the smallest unit. */
export const positiveAmount = amount.refine((value) => value !== '0', { error: 'must be greater than 0' });

/** True when every key and string value inside a JSON value passes `ok`. */
function everyString(value: unknown, ok: (s: string) => boolean): boolean {
  if (typeof value === 'string') return ok(value);
  if (Array.isArray(value)) return value.every((item) => everyString(item, ok));
  if (value !== null && typeof value === 'object') return Object.entries(value).every(([key, item]) => ok(key) && everyString(item, ok));
  return true;
}

/**
 * How deeply a JSON value nests (a scalar is 0, `{}` and `[]` are 1), counted without recursion and
 * stopping once past `limit`: a body may nest tens of thousands of levels within BODY_LIMIT, and
 * every recursive walk (ours, JSON.stringify) would overflow the stack on it.
 */
export function jsonDepthExceeds(value: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

/** Free-form Maker metadata: any JSON object, at most 4 KB once serialised and nested at most 32 levels. */
export const MAX_METADATA_BYTES = 4096;
export const MAX_METADATA_DEPTH = 32;
const metadata = z
  .record(z.string(), z.unknown(), { error: 'must be a JSON object' })
  // First and aborting: the checks after it walk the value recursively.
  .refine((value) => !jsonDepthExceeds(value, MAX_METADATA_DEPTH), { error: `must nest at most ${MAX_METADATA_DEPTH} levels deep`, abort: true })
  .refine((value) => everyString(value, isStorableText), { error: 'must not contain NUL bytes or unpaired surrogates', abort: true })
  .refine((value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_METADATA_BYTES, { error: `must be at most ${MAX_METADATA_BYTES} bytes of JSON` })
  .openapi({ example: { name: 'Fast lane', feeBps: 5 } });


export const createAdBody = z
  .strictObject({
    routeId: uuid,
    creatorDstAddress: address('Where the Maker is paid: an address of the order chain (0x on EVM; G... or C... on Stellar).'),
    fundAmount: positiveAmount.openapi({ description: "Initial deposit into the pool, in the ad token's smallest unit." }),
    minAmount: positiveAmount.nullable().optional().openapi({
      description: "Smallest trade amount (the Bridger's deposit, in the order token's smallest unit).",
    }),
    maxAmount: positiveAmount.nullable().optional().openapi({
      description: "Largest trade amount (the Bridger's deposit, in the order token's smallest unit).",
    }),
    metadata: metadata.nullable().optional().openapi({ description: 'Free-form JSON object, at most 4 KB; null or absent: none.' }),
  })
  .openapi('CreateAdBody', {
    example: {
      routeId: '0b5a4f8e-2c1d-4d7e-9a3b-6f1e2d3c4b5a',
      creatorDstAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      fundAmount: '1000000000000000000',
      minAmount: '1000',
      maxAmount: '500000000000000000',
      metadata: { name: 'Fast lane' },
    },
  });

export const fundAdBody = z.strictObject({ poolAmountTopUp: positiveAmount }).openapi('FundAdBody', { example: { poolAmountTopUp: '250000000000000000' } });

export const withdrawAdBody = z
  .strictObject({ poolAmountWithdraw: positiveAmount, to: address('Payout address on the ad chain.') })
  .openapi('WithdrawAdBody', { example: { poolAmountWithdraw: '100000000000000000', to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' } });

export const closeAdBody = z
  .strictObject({ to: address('Receives the remaining pool balance, on the ad chain.') })
  .openapi('CloseAdBody', { example: { to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' } });

export const txHash = z
  .string({ error: 'must be a transaction hash' })
  .regex(/^(0x)?[0-9a-fA-F]{64}$/, { error: 'must be a 32-byte transaction hash (64 hex digits, 0x optional)' })
  .openapi({ example: '0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060' });

export const confirmBody = z
  .strictObject({
    txHash,
    signature: shortText(1024).optional().openapi({ description: 'Accepted for compatibility; the transaction itself is what the service verifies.' }),
  })
  .openapi('ConfirmBody', { example: { txHash: '0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060' } });

export const updateAdBody = z
  .strictObject({
    status: z.enum(SETTABLE_AD_STATUSES, { error: `must be one of ${SETTABLE_AD_STATUSES.join(', ')}` }).optional(),
    minAmount: positiveAmount.nullable().optional().openapi({
      description: "Smallest trade amount (the deposit, order token's smallest unit); null clears the bound.",
    }),
    maxAmount: positiveAmount.nullable().optional().openapi({
      description: "Largest trade amount (the deposit, order token's smallest unit); null clears the bound.",
    }),
    metadata: metadata.nullable().optional().openapi({ description: 'Replaces the metadata; null clears it.' }),
  })
  .refine((body) => Object.keys(body).length > 0, { error: 'must name at least one of status, minAmount, maxAmount, metadata' })
  .openapi('UpdateAdBody', { example: { status: 'PAUSED', maxAmount: '200000000000000000' } });

/** What signed call data looks like on an EVM chain, for the document's examples. */
export const SIGNED_EXAMPLE = {
  chainId: '31337',
  contractAddress: '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9',
  signature: '0x8f5c0c5e4b0a7d2e9f1a3c6b8d0e2f4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e4a6c8e0a2c1b',
  authToken: '0x4b7d3f1a9c2e6b8d0f4a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d',
  deadline: '1795423800',
  timeToExpire: 600,
  reqHash: '0x6e1f0d2c3b4a59687766554433221100ffeeddccbbaa99887766554433221100',
  chainKind: 'EVM' as const,
};

/** The spec's shared signed call data. */
export const signedCallDataShape = {
  chainId: chainIdOut,
  contractAddress: addressOut,
  signature: z.string().openapi({ description: 'The relayer signature: 65-byte secp256k1 over reqHash (EVM), 64-byte ed25519 (Stellar).' }),
  signerPublicKey: z.string().optional().openapi({ description: 'Stellar only: the relayer key the contract checks.' }),
  authToken: z.string().openapi({ description: 'Single-use 32-byte token, argument of the contract call.' }),
  deadline: z.string().openapi({ description: 'Unix seconds after which the contract refuses the request.' }),
  timeToExpire: z.number().int().openapi({ description: 'Seconds until deadline.' }),
  reqHash: z.string(),
  chainKind: z.enum(['EVM', 'STELLAR']),
};

export const createAdResponse = z
  .object({
    ...signedCallDataShape,
    adId: z.string().uuid(),
    adCreator: addressOut,
    adToken: addressOut.openapi({ description: 'Token contract address of the ad token.' }),
    initialAmount: amountOut,
    orderChainId: chainIdOut,
    adRecipient: addressOut.openapi({ description: 'The Maker recipient on the order chain (creatorDstAddress).' }),
  })
  .openapi(
    'CreateAdResponse',
    {
      example: {
        ...SIGNED_EXAMPLE,
        ...{
          adId: '3f0e5a4c-8d7b-4c2a-9e1f-0a1b2c3d4e5f',
          adCreator: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
          adToken: '0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0',
          initialAmount: '1000000000000000000',
          orderChainId: '31338',
          adRecipient: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        },
      },
    },
  );
export const fundAdResponse = z.object({ ...signedCallDataShape, adId: z.string().uuid(), amount: amountOut }).openapi(
  'FundAdResponse',
  { example: { ...SIGNED_EXAMPLE, ...{ adId: '3f0e5a4c-8d7b-4c2a-9e1f-0a1b2c3d4e5f', amount: '250000000000000000' } } },
);
export const withdrawAdResponse = z.object({
  ...signedCallDataShape,
  adId: z.string().uuid(),
  amount: amountOut,
  to: addressOut,
}).openapi(
  'WithdrawAdResponse',
  {
    example: {
      ...SIGNED_EXAMPLE,
      ...{
        adId: '3f0e5a4c-8d7b-4c2a-9e1f-0a1b2c3d4e5f',
        amount: '100000000000000000',
        to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      },
    },
  },
);
export const closeAdResponse = z.object({ ...signedCallDataShape, adId: z.string().uuid(), to: addressOut }).openapi(
  'CloseAdResponse',
  {
    example: {
      ...SIGNED_EXAMPLE,
      ...{ adId: '3f0e5a4c-8d7b-4c2a-9e1f-0a1b2c3d4e5f', to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' },
    },
  },
);
export const confirmAdResponse = z.object({ adId: z.string().uuid(), success: z.boolean() }).openapi(
  'ConfirmAdResponse',
  { example: { adId: '3f0e5a4c-8d7b-4c2a-9e1f-0a1b2c3d4e5f', success: true } },
);
export const updateAdResponse = z
  .object({
    id: z.string().uuid(),
    status: z.enum(AD_STATUSES).openapi({ description: 'The ad as listed: EXHAUSTED while nothing is available, whatever was set.' }),
    setStatus: z.enum(['ACTIVE', 'PAUSED']).openapi({
      description: 'The status the Maker set and the service stored (ACTIVE or PAUSED). It differs from `status` ' +
        'while the ad is EXHAUSTED: a PAUSED ad stays PAUSED when it is funded again.',
    }),
    creatorAddress: addressOut,
    minAmount: amountOut.nullable(),
    maxAmount: amountOut.nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
  })
  .openapi(
    'UpdateAdResponse',
    {
      example: {
        id: '3f0e5a4c-8d7b-4c2a-9e1f-0a1b2c3d4e5f',
        status: 'PAUSED',
        setStatus: 'PAUSED',
        creatorAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        minAmount: '1000',
        maxAmount: '200000000000000000',
        metadata: { name: 'Fast lane' },
      },
    },
  );
