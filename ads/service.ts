import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Principal } from '../domain/principal.ts';
import { canonicalAddress, isRecipientAddress } from '../chains/address.ts';
import { RequestFieldError, type ActionFields } from '../chains/request-schema.ts';
import { buildSignedCallData, type ReturnedFields, type SignedCallData } from '../chains/signed-call-data.ts';
import type { RelayerSigners } from '../chains/signers.ts';
import type { ChainStateReader } from '../chains/state.ts';
import type { TransactionVerifier } from '../chains/verify.ts';
import type { ChainConnection, RegistryCache } from '../db/repositories/registry-cache.ts';
import { changeLockedAd, findAd, insertAd, type AdChange, type AdRecord } from '../db/repositories/ads.ts';
import { hasLiveClose, insertAdRequest, lockUserAdRequests, openAdRequests, type AdAction } from '../db/repositories/ad-requests.ts';
import { applyAnsweredRequests } from './apply-request.ts';
import { findAnsweredRequests } from './confirm.ts';
import { askLapsedRequests, freeLapsedHolds } from './lapsed-holds.ts';
import { applyOperations, available, balancesOf, type AdBalances, type LedgerOperation } from './ledger.ts';
import {
  AdInputError, AdNotFoundError, AdRequestLimitError, AdStateError, ChainUnavailableError, InsufficientLiquidityError, NotAdCreatorError,
} from './errors.ts';

export interface AdsSettings {
  /** SIGNED_REQUEST_TTL_SECONDS: how long signed call data stays valid. */
  signedRequestTtlSeconds: number;
  /** CONFIRM_GRACE_SECONDS: how long after its deadline a request's transaction may still be confirmed. */
  confirmGraceSeconds: number;
  /** MAX_PENDING_ADS_PER_USER: ads one user may have awaiting their create confirmation. */
  maxPendingAdsPerUser: number;
  /** MAX_OPEN_AD_REQUESTS_PER_USER: unconfirmed requests (every action) one user may have in their window. */
  maxOpenAdRequestsPerUser: number;
}

export interface AdsDeps {
  knex: Knex;
  registryCache: RegistryCache;
  signers: RelayerSigners;
  verifier: TransactionVerifier;
  /** Asked before a hold is given back: did the chain carry the request out? */
  chainState: ChainStateReader;
  settings: AdsSettings;
  /** Milliseconds since the epoch; tests pin it. */
  now?: () => number;
}

export interface CreateAdInput {
  routeId: string;
  creatorDstAddress: string;
  fundAmount: string;
  minAmount?: string | null;
  maxAmount?: string | null;
  metadata?: unknown;
}

export interface UpdateAdInput {
  status?: 'ACTIVE' | 'PAUSED';
  minAmount?: string | null;
  maxAmount?: string | null;
  metadata?: unknown;
}

/** What a change of the Maker's own ad applies: ledger operations on its balances, and settings. */
interface OwnAdChange {
  operations?: LedgerOperation[];
  set?: AdChange['set'];
}

/** Signed call data for an ad action, with the action's own fields. */
export type SignedAdRequest<A extends AdAction> = SignedCallData & ReturnedFields<A>;

/**
 * The Maker's use cases on ads. Every mutation is the ad creator's alone (the caller's wallet of
 * the ad chain's kind), runs in one transaction holding the ad row lock, and changes balances only
 * when the chain has confirmed the matching request.
 */
export function createAdsService(deps: AdsDeps) {
  const { knex, registryCache, settings } = deps;
  const now = () => new Date(deps.now?.() ?? Date.now());
  /** Requests whose deadline is before this can no longer be confirmed. */
  const confirmCutoff = () => new Date(now().getTime() - settings.confirmGraceSeconds * 1000);

  async function chainOf(chainId: string): Promise<ChainConnection> {
    const chain = await registryCache.chain(chainId);
    if (!chain) throw new ChainUnavailableError(`chain ${chainId} is not registered`);
    return chain;
  }

  /** The caller's wallet of the chain's kind: who the contract will see as the Maker. */
  function makerWallet(principal: Principal, chain: ChainConnection): string {
    const wallet = principal.wallets[chain.kind];
    if (!wallet) throw new NotAdCreatorError(`sign in with (or link) a ${chain.kind} wallet to manage ads on chain ${chain.chainId}`);
    return wallet;
  }

  function recipient(field: string, chain: ChainConnection, value: string): string {
    if (!isRecipientAddress(chain.kind, value)) {
      throw new AdInputError(field, `must be a ${chain.kind} address of chain ${chain.chainId}, received '${value}'`);
    }
    return canonicalAddress(chain.kind, value);
  }

  async function sign<A extends AdAction>(chain: ChainConnection, action: A, fields: ActionFields<A>, amountField: string): Promise<SignedAdRequest<A>> {
    try {
      return await buildSignedCallData({
        target: {
          kind: chain.kind,
          chainId: chain.chainId,
          contractAddress: chain.adManagerAddress,
          networkPassphrase: chain.networkPassphrase ?? undefined,
        },
        action,
        fields,
        signers: deps.signers,
        ttlSeconds: settings.signedRequestTtlSeconds,
        now: now().getTime(),
      });
    } catch (error) {
      // The only field-level refusal left at this point: a Stellar amount beyond i128.
      if (error instanceof RequestFieldError) throw new AdInputError(amountField, `does not fit chain ${chain.chainId}: ${error.message}`);
      throw error;
    }
  }

  const requestRow = <A extends AdAction>(adId: string, action: A, signed: SignedAdRequest<A>, chain: ChainConnection,
    amount: string | null, recipientAddress: string | null, held = '0') => ({
    adId, action, amount, recipient: recipientAddress, chainId: chain.chainId, contractAddress: signed.contractAddress,
    reqHash: signed.reqHash, authToken: signed.authToken, deadline: new Date(Number(signed.deadline) * 1000), heldAmount: held,
  });

  /**
   * Changes the caller's own ad in one transaction under its row lock (404 unknown, 403 not the
   * creator): first the holds of requests whose confirmation window has closed go back to the
   * available balance, so an abandoned request blocks nothing (the chain is asked about them before
   * the lock is taken: ads/lapsed-holds.ts); then `decide`, given the ad and its balances after
   * that, returns the ledger operations and settings to apply on top. One lock, one write.
   */
  async function changeOwnAd(
    principal: Principal, adId: string,
    decide: (trx: Knex.Transaction, ad: AdRecord, chain: ChainConnection, balances: AdBalances) => Promise<OwnAdChange> | OwnAdChange,
  ): Promise<AdRecord> {
    const unlocked = await findAd(knex, adId);
    if (!unlocked) throw new AdNotFoundError(adId);
    const chain = await chainOf(unlocked.adChainId);
    assertCreator(principal, unlocked, chain);
    const lapsed = await askLapsedRequests(knex, deps.chainState, chain, adId, confirmCutoff(), settings.signedRequestTtlSeconds);
    return knex.transaction(async (trx) => {
      const changed = await changeLockedAd(trx, adId, async (ad) => {
        const freed = await freeLapsedHolds(trx, balancesOf(ad), lapsed);
        const { operations = [], set } = await decide(trx, ad, chain, freed);
        return { balances: applyOperations(freed, operations), set };
      });
      if (!changed) throw new AdNotFoundError(adId);
      return changed;
    });
  }

  function assertCreator(principal: Principal, ad: AdRecord, chain: ChainConnection): void {
    if (principal.wallets[chain.kind] !== ad.creatorAddress) throw new NotAdCreatorError(`only the ad's creator may change ad ${ad.id}`);
  }

  function assertOpen(ad: AdRecord): void {
    if (ad.baseStatus === 'PENDING') throw new AdStateError(`ad ${ad.id} is not on chain yet: confirm its create transaction first`);
    if (ad.baseStatus === 'CLOSED') throw new AdStateError(`ad ${ad.id} is closed`);
  }

  /**
   * Refuses (429, `AdRequestLimitError`) a new request when the caller already has
   * MAX_OPEN_AD_REQUESTS_PER_USER unconfirmed requests in their window, or, for a create,
   * MAX_PENDING_ADS_PER_USER pending ads: every such request is something the books audit reads
   * from the chain until it is settled, so one free sign-in must not be able to make thousands.
   * Counted in `trx` under a per-user advisory lock held to its end, so concurrent requests of one
   * user are counted one after the other and cannot pass the limit together.
   */
  async function assertRequestRoom(trx: Knex.Transaction, principal: Principal, creating: boolean): Promise<void> {
    await lockUserAdRequests(trx, principal.userId);
    const wallets = Object.values(principal.wallets).filter((wallet): wallet is string => wallet !== undefined);
    const open = await openAdRequests(trx, wallets, confirmCutoff());
    const retryAfter = () => open.firstDeadline
      ? Math.max(1, Math.ceil((open.firstDeadline.getTime() + settings.confirmGraceSeconds * 1000 - now().getTime()) / 1000))
      : 1;
    if (creating && open.pendingAds >= settings.maxPendingAdsPerUser) {
      throw new AdRequestLimitError(
        `too many pending ads: ${open.pendingAds} of yours await their create confirmation (MAX_PENDING_ADS_PER_USER is ${settings.maxPendingAdsPerUser}); confirm one, or wait until its signed request lapses`,
        retryAfter(),
      );
    }
    if (open.openRequests >= settings.maxOpenAdRequestsPerUser) {
      throw new AdRequestLimitError(
        `too many open ad requests: ${open.openRequests} of yours are unconfirmed (MAX_OPEN_AD_REQUESTS_PER_USER is ${settings.maxOpenAdRequestsPerUser}); confirm one, or wait until its signed request lapses`,
        retryAfter(),
      );
    }
  }

  async function assertNoCloseUnderWay(trx: Knex.Transaction, ad: AdRecord): Promise<void> {
    if (await hasLiveClose(trx, ad.id, confirmCutoff())) throw new AdStateError(`ad ${ad.id} has a close under way`);
  }

  return {
    /** Records a PENDING ad and its create request; returns the signed `createAd` call data. */
    async create(principal: Principal, input: CreateAdInput): Promise<SignedAdRequest<'createAd'>> {
      const route = await registryCache.route(input.routeId);
      if (!route) throw new AdInputError('routeId', `is not a known route: '${input.routeId}'`);
      const adChain = await chainOf(route.adToken.chain.chainId);
      const orderChain = await chainOf(route.orderToken.chain.chainId);
      const creator = makerWallet(principal, adChain);
      // The Maker is paid on the order chain: that is where the recipient must live.
      const adRecipient = recipient('creatorDstAddress', orderChain, input.creatorDstAddress);
      assertBounds(input.minAmount ?? null, input.maxAmount ?? null);
      const adId = randomUUID();
      const signed = await sign(adChain, 'createAd', {
        adId,
        adCreator: creator,
        adToken: route.adToken.address,
        initialAmount: input.fundAmount,
        orderChainId: orderChain.chainId,
        adRecipient,
      }, 'fundAmount');
      await knex.transaction(async (trx) => {
        await assertRequestRoom(trx, principal, true);
        await insertAd(trx, {
          id: adId,
          creatorAddress: creator,
          creatorDstAddress: adRecipient,
          routeId: route.id,
          adTokenId: route.adToken.id,
          orderTokenId: route.orderToken.id,
          adChainId: adChain.chainId,
          orderChainId: orderChain.chainId,
          minAmount: input.minAmount ?? null,
          maxAmount: input.maxAmount ?? null,
          metadata: input.metadata,
        });
        await insertAdRequest(trx, requestRow(adId, 'createAd', signed, adChain, input.fundAmount, adRecipient));
      });
      return signed;
    },

    /** Signed `fundAd` call data; the pool grows when its transaction is confirmed. */
    async fund(principal: Principal, adId: string, amount: string): Promise<SignedAdRequest<'fundAd'>> {
      let signed!: SignedAdRequest<'fundAd'>;
      await changeOwnAd(principal, adId, async (trx, ad, chain) => {
        assertOpen(ad);
        await assertNoCloseUnderWay(trx, ad);
        await assertRequestRoom(trx, principal, false);
        signed = await sign(chain, 'fundAd', { adId, amount }, 'poolAmountTopUp');
        await insertAdRequest(trx, requestRow(adId, 'fundAd', signed, chain, amount, null));
        return {};
      });
      return signed;
    },

    /**
     * Signed `withdrawFromAd` call data for at most the available balance. The amount is held from
     * now until the transaction is confirmed or the request expires, so no trade can reserve it.
     */
    async withdraw(principal: Principal, adId: string, amount: string, to: string): Promise<SignedAdRequest<'withdrawFromAd'>> {
      let signed!: SignedAdRequest<'withdrawFromAd'>;
      await changeOwnAd(principal, adId, async (trx, ad, chain, balances) => {
        const payout = recipient('to', chain, to);
        assertOpen(ad);
        if (BigInt(amount) > available(balances)) {
          throw new InsufficientLiquidityError(`poolAmountWithdraw ${amount} exceeds the available balance ${available(balances)} of ad ${adId}`);
        }
        await assertRequestRoom(trx, principal, false);
        signed = await sign(chain, 'withdrawFromAd', { adId, amount, to: payout }, 'poolAmountWithdraw');
        await insertAdRequest(trx, requestRow(adId, 'withdrawFromAd', signed, chain, amount, payout, amount));
        return { operations: [{ op: 'hold', amount: BigInt(amount) }] };
      });
      return signed;
    },

    /**
     * Signed `closeAd` call data: the whole available balance goes to `to` and the ad closes for
     * good. Refused while trades hold reservations (their Bridgers would wait for a refund); from
     * now on no trade can reserve against the ad.
     */
    async close(principal: Principal, adId: string, to: string): Promise<SignedAdRequest<'closeAd'>> {
      let signed!: SignedAdRequest<'closeAd'>;
      await changeOwnAd(principal, adId, async (trx, ad, chain, balances) => {
        const payout = recipient('to', chain, to);
        assertOpen(ad);
        if (balances.reserved > 0n) {
          throw new AdStateError(`ad ${adId} has ${balances.reserved} reserved for trades awaiting their lock: close it after they lock or expire (an unfunded reservation ends with its deposit request, within TRADE_RESERVATION_TTL_SECONDS; pause the ad first so that no new one is made)`);
        }
        await assertRequestRoom(trx, principal, false);
        signed = await sign(chain, 'closeAd', { adId, to: payout }, 'to');
        const held = available(balances);
        await insertAdRequest(trx, requestRow(adId, 'closeAd', signed, chain, null, payout, held.toString()));
        return { operations: [{ op: 'hold', amount: held }] };
      });
      return signed;
    },

    /**
     * Applies the confirmed transaction `txHash` to the ad: finds the pending request it answers
     * (verified on the ad chain: contract, event, arguments, finality) and applies it once. The
     * same transaction again succeeds and changes nothing.
     */
    async confirm(principal: Principal, adId: string, txHash: string): Promise<void> {
      const ad = await findAd(knex, adId);
      if (!ad) throw new AdNotFoundError(adId);
      const chain = await chainOf(ad.adChainId);
      assertCreator(principal, ad, chain);
      const found = await findAnsweredRequests({ knex, verifier: deps.verifier, chain, ad, txHash });
      if (found.answered.length === 0) return; // a repeat: every request it answers is confirmed
      await knex.transaction((trx) => applyAnsweredRequests(trx, adId, found.txHash, found.answered));
    },

    /** Status, bounds or metadata; no transaction. Allowed from ACTIVE, PAUSED and EXHAUSTED. */
    async update(principal: Principal, adId: string, input: UpdateAdInput): Promise<AdRecord> {
      return changeOwnAd(principal, adId, (_trx, ad) => {
        if (ad.baseStatus === 'PENDING' || ad.baseStatus === 'CLOSED') throw new AdStateError(`ad ${adId} is ${ad.baseStatus} and cannot be updated`);
        const minAmount = input.minAmount !== undefined ? input.minAmount : ad.minAmount;
        const maxAmount = input.maxAmount !== undefined ? input.maxAmount : ad.maxAmount;
        assertBounds(minAmount, maxAmount);
        return { set: { baseStatus: input.status, minAmount: input.minAmount, maxAmount: input.maxAmount, metadata: input.metadata } };
      });
    },
  };
}

export type AdsService = ReturnType<typeof createAdsService>;

function assertBounds(minAmount: string | null, maxAmount: string | null): void {
  if (minAmount !== null && maxAmount !== null && BigInt(minAmount) > BigInt(maxAmount)) {
    throw new AdInputError('minAmount', `must not exceed maxAmount (${minAmount} > ${maxAmount})`);
  }
}
