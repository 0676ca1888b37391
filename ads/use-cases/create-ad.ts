import { randomUUID } from 'node:crypto';
import type { Principal } from '../../domain/principal.ts';
import { insertAd } from '../../db/repositories/ads.ts';
import { AdInputError } from '../errors.ts';
import type { AdContext } from './context.ts';
import { makerWallet } from './own-ad.ts';
import { assertBounds, assertRequestRoom, recipient, recordAdRequest, signAdRequest, type SignedAdRequest } from './requests.ts';

export interface CreateAdInput {
  routeId: string;
  creatorDstAddress: string;
  fundAmount: string;
  minAmount?: string | null;
  maxAmount?: string | null;
  metadata?: unknown;
}

/**
 * `POST /v1/ads/create`: records a PENDING ad and its create request, within the caller's request
 * limits, and returns the signed `createAd` call data. The ad goes live when its transaction is confirmed.
 */
export function createAd(ctx: AdContext) {
  return async (principal: Principal, input: CreateAdInput): Promise<SignedAdRequest<'createAd'>> => {
    const route = await ctx.deps.registryCache.route(input.routeId);
    if (!route) throw new AdInputError('routeId', `is not a known route: '${input.routeId}'`);
    const adChain = await ctx.chainOf(route.adToken.chain.chainId);
    const orderChain = await ctx.chainOf(route.orderToken.chain.chainId);
    const creator = makerWallet(principal, adChain);
    // The Maker is paid on the order chain: that is where the recipient must live.
    const adRecipient = recipient('creatorDstAddress', orderChain, input.creatorDstAddress);
    // Every trade's unlock pays the Maker the order token there: a Stellar address that cannot take it (no account
    // for XLM, no usable trustline for a classic asset) would leave each trade's deposit unclaimable.
    // The amounts are not known yet; 1 (the smallest unit) asks whether it can be paid at all.
    const unpayable = await ctx.deps.orderChainReader.recipientProblem(orderChain, route.orderToken.address, adRecipient, 1n);
    if (unpayable !== null) throw new AdInputError('creatorDstAddress', `cannot receive the order token: ${unpayable}`, { code: 'RECIPIENT_CANNOT_RECEIVE' });
    assertBounds(input.minAmount ?? null, input.maxAmount ?? null);
    const adId = randomUUID();
    const signed = await signAdRequest(ctx, adChain, 'createAd', {
      adId, adCreator: creator, adToken: route.adToken.address, initialAmount: input.fundAmount, orderChainId: orderChain.chainId, adRecipient,
    }, 'fundAmount');
    await ctx.knex.transaction(async (trx) => {
      await assertRequestRoom(ctx, trx, principal, true);
      await insertAd(trx, {
        id: adId, creatorAddress: creator, creatorDstAddress: adRecipient, routeId: route.id, adTokenId: route.adToken.id,
        orderTokenId: route.orderToken.id, adChainId: adChain.chainId, orderChainId: orderChain.chainId,
        minAmount: input.minAmount ?? null, maxAmount: input.maxAmount ?? null, metadata: input.metadata,
      });
      await recordAdRequest(trx, adId, 'createAd', signed, adChain, input.fundAmount, adRecipient);
    });
    return signed;
  };
}
