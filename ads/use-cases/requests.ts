import type { Knex } from 'knex';
import type { Principal } from '../../domain/principal.ts';
import { adapterOf } from '../../chains/adapters.ts';
import { RequestFieldError, type ActionFields } from '../../chains/request-schema.ts';
import { buildSignedCallData, type ReturnedFields, type SignedCallData } from '../../chains/signed-call-data.ts';
import { insertAdRequest, lockUserAdRequests, openAdRequests, type AdAction } from '../../db/repositories/ad-requests.ts';
import type { ChainConnection } from '../../db/repositories/registry-cache.ts';
import { AdInputError, AdRequestLimitError } from '../errors.ts';
import type { AdContext } from './context.ts';

/** Signed call data for an ad action, with the action's own fields. */
export type SignedAdRequest<A extends AdAction> = SignedCallData & ReturnedFields<A>;

/** `value` as an address of `chain` (canonical spelling), or `AdInputError` naming `field`. */
export function recipient(field: string, chain: ChainConnection, value: string): string {
  if (!adapterOf(chain.kind).isRecipientAddress(value)) {
    throw new AdInputError(field, `must be a ${chain.kind} address of chain ${chain.chainId}, received '${value}'`);
  }
  return adapterOf(chain.kind).canonicalAddress(value);
}

/** The relayer's signed AdManager call data for `action`; an amount the chain cannot take is `AdInputError` on `amountField`. */
export async function signAdRequest<A extends AdAction>(
  ctx: AdContext, chain: ChainConnection, action: A, fields: ActionFields<A>, amountField: string,
): Promise<SignedAdRequest<A>> {
  try {
    return await buildSignedCallData({
      target: { kind: chain.kind, chainId: chain.chainId, contractAddress: chain.adManagerAddress, networkPassphrase: chain.networkPassphrase ?? undefined },
      action,
      fields,
      signers: ctx.deps.signers,
      ttlSeconds: ctx.settings.signedRequestTtlSeconds,
      now: ctx.now().getTime(),
    });
  } catch (error) {
    // The only field-level refusal left at this point: a Stellar amount beyond i128.
    if (error instanceof RequestFieldError) throw new AdInputError(amountField, `does not fit chain ${chain.chainId}: ${error.message}`);
    throw error;
  }
}

/** Records the signed request (PENDING) in `trx`, holding `held` of the ad until it is confirmed or lapses. */
export async function recordAdRequest<A extends AdAction>(
  trx: Knex.Transaction, adId: string, action: A, signed: SignedAdRequest<A>, chain: ChainConnection,
  amount: string | null, recipientAddress: string | null, held = '0',
): Promise<void> {
  await insertAdRequest(trx, {
    adId, action, amount, recipient: recipientAddress, chainId: chain.chainId, contractAddress: signed.contractAddress,
    reqHash: signed.reqHash, authToken: signed.authToken, deadline: new Date(Number(signed.deadline) * 1000), heldAmount: held,
  });
}

/**
 * Refuses (429, `AdRequestLimitError`) a new request when the caller already has
 * MAX_OPEN_AD_REQUESTS_PER_USER unconfirmed requests in their window, or, for a create,
 * MAX_PENDING_ADS_PER_USER pending ads: every such request is something the books audit reads
 * from the chain until it is settled, so one free sign-in must not be able to make thousands.
 * Counted in `trx` under a per-user advisory lock held to its end, so concurrent requests of one
 * user are counted one after the other and cannot pass the limit together.
 */
export async function assertRequestRoom(ctx: AdContext, trx: Knex.Transaction, principal: Principal, creating: boolean): Promise<void> {
  const { settings } = ctx;
  await lockUserAdRequests(trx, principal.userId);
  const wallets = Object.values(principal.wallets).filter((wallet): wallet is string => wallet !== undefined);
  const open = await openAdRequests(trx, wallets, ctx.confirmCutoff());
  const retryAfter = () => open.firstDeadline
    ? Math.max(1, Math.ceil((open.firstDeadline.getTime() + settings.confirmGraceSeconds * 1000 - ctx.now().getTime()) / 1000))
    : 1;
  if (creating && open.pendingAds >= settings.maxPendingAdsPerUser) {
    throw new AdRequestLimitError(
      `too many pending ads: ${open.pendingAds} of yours await their create confirmation `
        + `(MAX_PENDING_ADS_PER_USER is ${settings.maxPendingAdsPerUser}); confirm one, or wait until its signed request lapses`,
      retryAfter(),
    );
  }
  if (open.openRequests >= settings.maxOpenAdRequestsPerUser) {
    throw new AdRequestLimitError(
      `too many open ad requests: ${open.openRequests} of yours are unconfirmed `
        + `(MAX_OPEN_AD_REQUESTS_PER_USER is ${settings.maxOpenAdRequestsPerUser}); confirm one, or wait until its signed request lapses`,
      retryAfter(),
    );
  }
}

/** `AdInputError` on `minAmount` when both bounds are set and the minimum exceeds the maximum. */
export function assertBounds(minAmount: string | null, maxAmount: string | null): void {
  if (minAmount !== null && maxAmount !== null && BigInt(minAmount) > BigInt(maxAmount)) {
    throw new AdInputError('minAmount', `must not exceed maxAmount (${minAmount} > ${maxAmount})`);
  }
}
