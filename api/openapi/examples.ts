import type { z } from 'zod';
import { createAdResponse, SIGNED_EXAMPLE } from '../schemas/ads.ts';
import { quoteResponse } from '../schemas/quotes.ts';
import { tradeSchema } from '../schemas/resources.ts';
import { confirmTradeResponse, createTradeResponse, unlockTradeResponse } from '../schemas/trades.ts';

/*
 * Success bodies of the main operations, one trade of 10 TUSD from 31337 to 31338 as the devnet makes
 * it, shown in /docs and carried by the document (`example` of the 200 response). Each is typed by its
 * response schema and parsed by it in examples.test.ts, so an example cannot drift from what is answered.
 */

const TRADE_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const AD_ID = '3f0e5a4c-8d7b-4c2a-9e1f-0a1b2c3d4e5f';
const ROUTE_ID = '0b5a4f8e-2c1d-4d7e-9a3b-6f1e2d3c4b5a';
const MAKER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const BRIDGER = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
const ORDER_HASH = '0x9a1f6c0d2b3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f90';

const ORDER_PARAMS = {
  orderChainToken: '0x5FbDB2315678afecb367f032d93F642f64180aa3', adChainToken: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
  amount: '10000000', orderAmount: '10000000', adAmount: '10000000', bridger: BRIDGER, orderRecipient: MAKER,
  adId: AD_ID, adCreator: MAKER, adRecipient: BRIDGER, salt: '48151623429108', orderChainId: '31337',
  orderPortal: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512', adChainId: '31338', adManager: '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9',
  lockExpiry: '1795427400', refundTime: '1795510200',
};

const createTrade: z.infer<typeof createTradeResponse> = {
  tradeId: TRADE_ID,
  reqContractDetails: {
    ...SIGNED_EXAMPLE, contractAddress: ORDER_PARAMS.orderPortal, orderHash: ORDER_HASH,
    secretCommitment: '14744269619966411208579211824598458697587494354926760081771325075741142829156', orderParams: ORDER_PARAMS,
  },
};

const confirmTrade: z.infer<typeof confirmTradeResponse> = { tradeId: TRADE_ID, success: true, duplicate: false };

const unlockTrade: z.infer<typeof unlockTradeResponse> = {
  ...SIGNED_EXAMPLE, chainId: '31338', contractAddress: ORDER_PARAMS.adManager, orderParams: ORDER_PARAMS,
  nullifierHash: '5301900180746108365834837840355741695167403565517259206038360553628813006131',
  targetRoot: '9434869911342133271818839593716419232290312932227734823010962045106330180066',
  proof: `0x${'1f'.repeat(256)}`, orderHash: ORDER_HASH,
};

const token = (chainId: '31337' | '31338', address: string) => ({
  id: chainId === '31337' ? '2d1c0b9a-8f7e-4d6c-b5a4-938271605f4e' : '6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d', symbol: 'TUSD', name: 'Test USD',
  address, decimals: 6, kind: 'ERC20' as const,
  chain: { id: `c0ffee00-0000-4000-8000-0000000${chainId}`, name: `Devnet ${chainId}`, chainId },
});

const getTrade: z.infer<typeof tradeSchema> = {
  id: TRADE_ID, routeId: ROUTE_ID, adId: AD_ID, adCreatorAddress: MAKER, adChainId: '31338', orderChainId: '31337', bridgerAddress: BRIDGER,
  amount: '10000000', status: 'LOCKED', adCreatorClaimed: false, bridgerClaimed: false, unlockDue: 'MAKER', unlockableBy: ['MAKER', 'BRIDGER'],
  createdAt: '2026-11-22T10:00:00.000Z', updatedAt: '2026-11-22T10:00:41.000Z',
  ad: { id: AD_ID, routeId: ROUTE_ID, creatorAddress: MAKER },
  route: { id: ROUTE_ID, adToken: token('31338', ORDER_PARAMS.adChainToken), orderToken: token('31337', ORDER_PARAMS.orderChainToken) },
  orderHash: ORDER_HASH,
  transactions: [
    { step: 'deposit', chainId: '31337', txHash: '0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060', sentBy: 'bridger' },
    { step: 'lock', chainId: '31338', txHash: '0x0e3b4cc7f4f1a3f0d8a2b9c6e5d4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6', sentBy: 'maker' },
  ],
};

const getQuote: z.infer<typeof quoteResponse> = {
  routeId: ROUTE_ID, amount: '10000000', adAmount: '10000000', quotedAt: '2026-11-22T10:00:00.000Z',
  quotes: [{
    adId: AD_ID, orderAmount: '10000000', adAmount: '10000000', minAmount: '1000000', maxAmount: null, availableAmount: '100000000',
    reservationExpiresAt: '2026-11-22T10:09:50.000Z',
  }],
  unavailable: [],
};

const createAd: z.infer<typeof createAdResponse> = {
  ...SIGNED_EXAMPLE, adId: AD_ID, adCreator: MAKER, adToken: ORDER_PARAMS.adChainToken, initialAmount: '100000000', orderChainId: '31337',
  adRecipient: MAKER,
};

/** The example success body of each main operation, by operationId. */
export const RESPONSE_EXAMPLES: Record<string, unknown> = {
  createTrade, confirmTradeTransaction: confirmTrade, unlockTrade, getTrade, getQuote, createAd,
};

/** Each example with the schema it must satisfy (examples.test.ts). */
export const EXAMPLE_SCHEMAS: Record<string, z.ZodType> = {
  createTrade: createTradeResponse, confirmTradeTransaction: confirmTradeResponse, unlockTrade: unlockTradeResponse,
  getTrade: tradeSchema, getQuote: quoteResponse, createAd: createAdResponse,
};
