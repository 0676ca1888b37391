import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { AdNotFoundError, AdStateError, ChainUnavailableError, InsufficientLiquidityError } from '../ads/errors.ts';
import { askLapsedRequests, freeLapsedHolds } from '../ads/lapsed-holds.ts';
import { applyOperation, available, balancesOf } from '../ads/ledger.ts';
import type { Principal } from '../domain/principal.ts';
import { canonicalAddress, isRecipientAddress } from '../chains/address.ts';
import { computeOrderHash, randomSalt, type OrderParams } from '../chains/order.ts';
import type { OrderChainReader } from '../chains/order-chain.ts';
import { RequestFieldError } from '../chains/request-schema.ts';
import { buildSignedCallData } from '../chains/signed-call-data.ts';
import type { RelayerSigners } from '../chains/signers.ts';
import { computeOrderTimes, lockDeadline, ttlWithin, type OrderTimingPolicy } from '../chains/timing.ts';
import type { ChainStateReader } from '../chains/state.ts';
import type { TransactionVerifier } from '../chains/verify.ts';
import { isWalletSignature } from '../chains/wallet-signature.ts';
import { hasLiveClose } from '../db/repositories/ad-requests.ts';
import { changeLockedAd, findAd } from '../db/repositories/ads.ts';
import { findSubjectEvent } from '../db/repositories/chain-events.ts';
import { lockWalletReservations, openReservations } from '../db/repositories/reservations.ts';
import type { ChainConnection, RegistryCache } from '../db/repositories/registry-cache.ts';
import { appendPushedEvents } from '../db/repositories/pushed-events.ts';
import { findTradeLifecycle, insertTrade, type TradeLifecycleRecord } from '../db/repositories/trade-lifecycle.ts';
import { recordTradeStart } from '../db/repositories/trade-starts.ts';
import { randomSecret, secretCommitment } from '../prover/commitments.ts';
import { encodeProof, type Groth16Proof } from '../prover/solidity.ts';
import { stateOf } from './activities.ts';
import { TradeNotFoundError } from './lifecycle-errors.ts';
import { INITIAL_STATE, lockDue, unlockDue, type Role, type UnlockSide } from './lifecycle.ts';
import { tradeSnapshot } from './pushed-events.ts';
import type { AppliedEvent, ConfirmationKind, ConfirmingTrade, Orchestrator } from './orchestrator.ts';
import { NotTradePartyError, TooManyReservationsError, TradeAwaitingError, TradeInputError, TradeNotReadyError } from './errors.ts';
import type { TradeStarts } from './start-reconciler.ts';
import { assertOwnFunding, type OwnFundingRequest } from './own-funding.ts';
import { createUnbackedReservationsRecheck } from './unbacked-reservations.ts';
import { boundsProblem, depositTtlSeconds, priceDeposit, reservationExpiry } from './create-terms.ts';
import { createQuotes } from './quotes.ts';

export interface TradesSettings {
  signedRequestTtlSeconds: number;
  confirmGraceSeconds: number;
  /** TRADE_RESERVATION_TTL_SECONDS: the deposit request and its reservation live at most this long. */
  reservationTtlSeconds: number;
  /** MAX_OPEN_RESERVATIONS_PER_WALLET and MAX_OPEN_RESERVATIONS_PER_AD: unfunded reservations at once. */
  maxOpenReservationsPerWallet: number;
  maxOpenReservationsPerAd: number;
  /** UNBACKED_RESERVATIONS_RECHECK_SECONDS: at most one re-read of an ad's reservations this often (trades/unbacked-reservations.ts); 10 when unset. */
  unbackedRecheckSeconds?: number;
  /** How long a new trade's start is left to its creating request before the reconciler may take it. */
  startGraceSeconds: number;
  /** How far apart an order's times are placed (ORDER_LOCK_EXPIRY_SECONDS); chains/timing.ts DEFAULT_ORDER_TIMING when unset. */
  orderTiming?: OrderTimingPolicy;
}

export { RESERVATION_CHAIN_MARGIN_SECONDS } from './create-terms.ts';

export interface TradesDeps {
  knex: Knex;
  registryCache: RegistryCache;
  signers: RelayerSigners;
  verifier: TransactionVerifier;
  /** Asked before a withdraw's or close's hold is given back: did the chain carry it out? */
  chainState: ChainStateReader;
  orchestrator: () => Orchestrator;
  /** The durable start (trades/start-reconciler.ts): the outbox row written with the reservation is cleared once started. */
  starts: TradeStarts;
  /** Reads the Bridger's balance and allowance on the order chain before reserving. */
  orderChainReader: OrderChainReader;
  /** Ends a reservation now, as its timer would (trades/unbacked-reservations.ts): the lifecycle's RESERVATION_EXPIRED step. */
  expireReservation(tradeId: string): Promise<unknown>;
  settings: TradesSettings;
  now?: () => number;
}

export interface CreateTradeInput {
  adId: string;
  routeId: string;
  amount: string;
  bridgerDstAddress: string;
}

/**
 * The trade use cases: reserve and sign (create), hand out lock and unlock call data to the right
 * party at the right time, and pass confirmations to the orchestrator, which drives the lifecycle.
 */
export function createTradesService(deps: TradesDeps) {
  const { knex, registryCache, settings } = deps;
  const nowMs = () => deps.now?.() ?? Date.now();
  const nowSeconds = () => Math.floor(nowMs() / 1000);
  const unbackedRecheck = createUnbackedReservationsRecheck(deps, { intervalMs: (settings.unbackedRecheckSeconds ?? 10) * 1000, nowMs });

  async function chainOf(chainId: string): Promise<ChainConnection> {
    const chain = await registryCache.chain(chainId);
    if (!chain) throw new ChainUnavailableError(`chain ${chainId} is not registered`);
    return chain;
  }

  const target = (chain: ChainConnection, contractAddress: string) => ({
    kind: chain.kind, chainId: chain.chainId, contractAddress, networkPassphrase: chain.networkPassphrase ?? undefined,
  });

  /** The caller's role in the trade, or 403. */
  function roleOf(principal: Principal, trade: TradeLifecycleRecord): Role {
    const wallets = Object.values(principal.wallets);
    if (wallets.includes(trade.adCreatorAddress)) return 'maker';
    if (wallets.includes(trade.bridgerAddress)) return 'bridger';
    throw new NotTradePartyError(`only the trade's Bridger and the ad's Maker may do this on trade ${trade.id}`);
  }

  async function partyTrade(principal: Principal, tradeId: string): Promise<{ trade: TradeLifecycleRecord; role: Role }> {
    const trade = await findTradeLifecycle(knex, tradeId);
    if (!trade) throw new TradeNotFoundError(tradeId);
    return { trade, role: roleOf(principal, trade) };
  }

  /** Before signing on a deposit, it must still be in the order chain's canonical history. */
  async function assertDepositCanonical(trade: TradeLifecycleRecord): Promise<void> {
    const orderChain = await chainOf(trade.orderChainId);
    const deposit = await findSubjectEvent(knex, 'trade', trade.id, orderChain.chainId, 'OrderCreated');
    if (!deposit || !orderChain.rpcUrl) return;
    const canonical = await deps.verifier.isCanonical(
      { kind: orderChain.kind, chainId: orderChain.chainId, rpcUrl: orderChain.rpcUrl },
      { block: deposit.block, blockHash: deposit.blockHash },
    );
    if (!canonical) throw new TradeNotReadyError(`the deposit of trade ${trade.id} is no longer in the order chain's history (reorganised away)`);
  }

  return {
    /**
     * Reserves `amount` of the ad in one transaction holding the ad row lock, and returns signed
     * `OrderPortal.createOrder` call data with the order it commits to. The same transaction records
     * the intent to start the trade's lifecycle; the start itself follows the commit, and if the
     * orchestrator cannot take it now the reconciler does later (the reservation still expires on time).
     * The route must be one the service can price (domain/route-pricing.ts). The reservation lives
     * only as long as that deposit request; it needs the Bridger to hold the deposit on the order chain
     * (balance covering this and the wallet's other open reservations of the token; an ERC-20
     * approved to the OrderPortal for it), and at most MAX_OPEN_RESERVATIONS_PER_WALLET and
     * MAX_OPEN_RESERVATIONS_PER_AD unfunded reservations are open at once. The caller's own funding
     * is judged first (trades/own-funding.ts): a caller who cannot pay costs one read of its own and
     * nothing of anyone else's; one who can and finds the ad taken may start the throttled re-read of
     * the ad's reservations (trades/unbacked-reservations.ts).
     */
    async create(principal: Principal, input: CreateTradeInput) {
      const ad = await findAd(knex, input.adId);
      if (!ad || ad.status === 'PENDING') throw new AdNotFoundError(input.adId);
      if (ad.routeId !== input.routeId) throw new TradeInputError('routeId', `must be the ad's route ${ad.routeId}, received '${input.routeId}'`);
      const adChain = await chainOf(ad.adChainId);
      const orderChain = await chainOf(ad.orderChainId);
      const bridger = principal.wallets[orderChain.kind];
      if (!bridger) throw new NotTradePartyError(`sign in with (or link) a ${orderChain.kind} wallet: the deposit is made on chain ${orderChain.chainId}`);
      if (Object.values(principal.wallets).includes(ad.creatorAddress)) throw new NotTradePartyError('nobody trades against their own ad');
      if (!isRecipientAddress(adChain.kind, input.bridgerDstAddress)) {
        throw new TradeInputError('bridgerDstAddress', `must be a ${adChain.kind} address of chain ${adChain.chainId}, received '${input.bridgerDstAddress}'`);
      }
      const bridgerDst = canonicalAddress(adChain.kind, input.bridgerDstAddress);
      const amount = BigInt(input.amount);
      // The same terms a quote previews (trades/create-terms.ts).
      const outOfBounds = boundsProblem(ad, amount);
      if (outOfBounds !== null) {
        const below = ad.minAmount !== null && amount < BigInt(ad.minAmount);
        throw new TradeInputError('amount', outOfBounds, { code: below ? 'AMOUNT_BELOW_MINIMUM' : 'AMOUNT_ABOVE_MAXIMUM' });
      }
      const route = (await registryCache.route(ad.routeId))!;
      const priced = priceDeposit(route, amount);
      if (!priced.ok) {
        throw new TradeInputError(priced.field, priced.problem, { code: priced.reason === 'INEXACT_CONVERSION' ? 'AMOUNT_NOT_CONVERTIBLE' : 'ROUTE_NOT_PRICED' });
      }
      const { adAmount } = priced;
      const createdAt = nowSeconds();
      const depositTtl = depositTtlSeconds(settings);
      const times = computeOrderTimes(createdAt, settings.orderTiming, depositTtl);
      const orderParams: OrderParams = {
        orderChainToken: route.orderToken.address,
        adChainToken: route.adToken.address,
        amount: input.amount,
        orderAmount: input.amount,
        adAmount: adAmount.toString(),
        bridger,
        orderRecipient: ad.creatorDstAddress,
        adId: ad.id,
        adCreator: ad.creatorAddress,
        adRecipient: bridgerDst,
        salt: randomSalt(),
        orderChainId: orderChain.chainId,
        orderPortal: orderChain.orderPortalAddress,
        adChainId: adChain.chainId,
        adManager: adChain.adManagerAddress,
        ...times,
      };
      const secret = randomSecret();
      const commitment = secretCommitment(secret).toString();
      let orderHash: string;
      let signed;
      try {
        orderHash = computeOrderHash(orderParams, deps.signers.domain);
        signed = await buildSignedCallData({
          target: target(orderChain, orderChain.orderPortalAddress),
          action: 'createOrder',
          fields: { orderHash, secretCommitment: commitment },
          signers: deps.signers,
          ttlSeconds: depositTtl,
          now: nowMs(),
        });
      } catch (error) {
        if (error instanceof RequestFieldError) throw new TradeInputError('amount', `does not fit the chains of this route: ${error.message}`);
        throw error;
      }
      const funding = await deps.orderChainReader.depositFunding(orderChain, route.orderToken.address, bridger, orderChain.orderPortalAddress);
      const own: OwnFundingRequest = {
        bridger, amount, amountText: input.amount, orderPortal: orderChain.orderPortalAddress, maxOpenPerWallet: settings.maxOpenReservationsPerWallet,
        token: `${route.orderToken.symbol} (${route.orderToken.address}) on chain ${orderChain.chainId}`,
      };
      // The caller's own funding first (issue 33): one who cannot pay makes the service read nothing of anyone else's.
      const reservationQuery = { bridgerAddress: bridger, adId: ad.id, orderTokenId: ad.orderTokenId };
      assertOwnFunding(funding, await openReservations(knex, { ...reservationQuery, now: new Date(nowMs()) }), own);
      // An ad taken by reservations whose wallets no longer hold what they promised is freed of them
      // first; at most one such re-read per ad per UNBACKED_RESERVATIONS_RECHECK_SECONDS, shared.
      await unbackedRecheck.releaseIfTaken({ id: ad.id, orderTokenId: ad.orderTokenId, available: available(balancesOf(ad)) }, {
        adAmount, maxOpenPerAd: settings.maxOpenReservationsPerAd, orderChain, orderToken: route.orderToken.address, now: new Date(nowMs()),
      });
      const tradeId = randomUUID();
      const reservationExpiresAt = reservationExpiry(Number(signed.deadline));
      const deadline = new Date(Number(lockDeadline(times)) * 1000);
      const cutoff = new Date(nowMs() - settings.confirmGraceSeconds * 1000);
      // Abandoned withdraw and close requests give their holds back first: they block nothing. The
      // chain is asked about them before the ad row is locked (ads/lapsed-holds.ts).
      const lapsed = await askLapsedRequests(knex, deps.chainState, adChain, ad.id, cutoff, settings.signedRequestTtlSeconds);
      await knex.transaction(async (trx) => {
        await changeLockedAd(trx, ad.id, async (current) => {
          const freed = await freeLapsedHolds(trx, balancesOf(current), lapsed);
          if (current.baseStatus !== 'ACTIVE') throw new AdStateError(`ad ${ad.id} is ${current.status}: it takes no trades`);
          if (await hasLiveClose(trx, ad.id, cutoff)) throw new AdStateError(`ad ${ad.id} is closing: it takes no trades`);
          if (available(freed) < adAmount) {
            throw new InsufficientLiquidityError(`ad ${ad.id} cannot cover ${input.amount} (${adAmount} ${route.adToken.symbol} base units): ${available(freed)} available`);
          }
          await lockWalletReservations(trx, bridger);
          const open = await openReservations(trx, { ...reservationQuery, now: new Date(nowMs()) });
          assertOwnFunding(funding, open, own); // again under the locks: the count and sum may have moved since
          if (open.adCount >= settings.maxOpenReservationsPerAd) {
            throw new TooManyReservationsError(`ad ${ad.id} already has ${open.adCount} trades awaiting their deposit (at most ${settings.maxOpenReservationsPerAd}): try again when one is deposited or runs out`);
          }
          return { balances: applyOperation(freed, { op: 'reserve', amount: adAmount }) };
        });
        await insertTrade(trx, {
          id: tradeId, routeId: ad.routeId, adId: ad.id, adCreatorAddress: ad.creatorAddress, bridgerAddress: bridger,
          bridgerDstAddress: bridgerDst, adChainId: adChain.chainId, orderChainId: orderChain.chainId, adTokenId: ad.adTokenId,
          orderTokenId: ad.orderTokenId, amount: input.amount, orderParams: { ...orderParams }, orderHash, secret: secret.toString(),
          secretCommitment: commitment, reservationExpiresAt, lockDeadline: deadline,
        });
        await appendPushedEvents(trx, {
          tradeId, adId: ad.id, recipients: [ad.creatorAddress, bridger],
          events: [{ type: 'trade.created', data: {
            ...tradeSnapshot({ tradeId, adId: ad.id }, INITIAL_STATE), routeId: ad.routeId, amount: input.amount,
            orderAmount: orderParams.orderAmount, adAmount: orderParams.adAmount, adCreatorAddress: ad.creatorAddress, bridgerAddress: bridger,
          } }],
        });
        await recordTradeStart(trx, tradeId, settings.startGraceSeconds);
      });
      await deps.starts.start({ tradeId, adId: ad.id, routeId: ad.routeId, reservationExpiresAt, lockDeadline: deadline });
      return { tradeId, reqContractDetails: { ...signed, orderParams, orderHash, secretCommitment: commitment } };
    },

    /** GET /v1/quotes (trades/quotes.ts): the ads create would reserve against for an amount now, best first, or why none would. */
    quote: createQuotes({ knex, registryCache, settings, nowMs }).quote,

    /** The order parameters and the order hash, for either party. */
    async params(principal: Principal, tradeId: string) {
      const { trade } = await partyTrade(principal, tradeId);
      return { ...trade.orderParams, orderHash: trade.orderHash };
    },

    /** Signed `AdManager.lockForOrder` call data: the Maker's, when the machine says the lock is due (`lockDue`) and while the lock window is open. */
    async lock(principal: Principal, tradeId: string) {
      const { trade, role } = await partyTrade(principal, tradeId);
      if (role !== 'maker') throw new NotTradePartyError(`only the ad's Maker locks trade ${tradeId}`);
      const due = lockDue(stateOf(trade));
      if ('missing' in due) throw new TradeNotReadyError(`trade ${tradeId}: ${due.missing}`);
      const ttl = ttlWithin(lockDeadline({ lockExpiry: trade.orderParams.lockExpiry }), nowSeconds(), settings.signedRequestTtlSeconds);
      if (ttl <= 0) throw new TradeNotReadyError(`the lock window of trade ${tradeId} has closed`);
      await assertDepositCanonical(trade);
      const adChain = await chainOf(trade.adChainId);
      const signed = await buildSignedCallData({
        target: target(adChain, trade.orderParams.adManager),
        action: 'lockForOrder',
        fields: { orderHash: trade.orderHash },
        signers: deps.signers,
        ttlSeconds: ttl,
        now: nowMs(),
      });
      return { ...signed, orderParams: trade.orderParams, orderHash: trade.orderHash };
    },

    /**
     * Signed unlock call data with the proof for the unlock the caller may be given
     * (trades/lifecycle.ts `unlockDue`): `side` when asked for, else the caller's default (the
     * Maker's the ad side, the Bridger's the order side); only the side in turn: the ad side (pays
     * the Bridger, to either party) first, the order side (pays the Maker) once the ad side is
     * confirmed. `signature` is the caller's wallet signature over the 32 bytes of the order hash.
     */
    async unlock(principal: Principal, tradeId: string, signature: string, side?: UnlockSide) {
      const { trade, role } = await partyTrade(principal, tradeId);
      const adChain = await chainOf(trade.adChainId);
      const orderChain = await chainOf(trade.orderChainId);
      const [kind, address] = role === 'maker' ? [adChain.kind, trade.adCreatorAddress] : [orderChain.kind, trade.bridgerAddress];
      if (!isWalletSignature(kind, address, Buffer.from(trade.orderHash.slice(2), 'hex'), signature)) {
        throw new TradeInputError('signature', `must be your wallet's signature (${address}) over the order hash ${trade.orderHash} (its 32 bytes or its 0x hex text)`);
      }
      const due = unlockDue(stateOf(trade), role, side);
      if ('missing' in due) throw new (due.awaited ? TradeAwaitingError : TradeNotReadyError)(`trade ${tradeId}: ${due.missing}`);
      const proof = trade.proof!;
      await assertDepositCanonical(trade);
      const [chain, contract, cap] = due.side === 'ad'
        ? [adChain, trade.orderParams.adManager, trade.orderParams.lockExpiry]
        : [orderChain, trade.orderParams.orderPortal, trade.orderParams.refundTime];
      const ttl = ttlWithin(cap, nowSeconds(), settings.signedRequestTtlSeconds);
      if (ttl <= 0) throw new TradeNotReadyError(`the ${due.side}-chain unlock window of trade ${tradeId} has closed`);
      const signed = await buildSignedCallData({
        target: target(chain, contract),
        action: 'unlock',
        fields: { orderHash: trade.orderHash, nullifierHash: proof.nullifierHash, targetRoot: proof.targetRoot },
        signers: deps.signers,
        ttlSeconds: ttl,
        now: nowMs(),
      });
      return {
        ...signed,
        orderParams: trade.orderParams,
        proof: encodeProof(proof.proof as Groth16Proof),
        orderHash: trade.orderHash,
      };
    },

    /**
     * A deposit or lock transaction (`/confirm`), or an unlock (`/unlock/confirm`), passed to the
     * orchestrator with the trade as read here (the one read before the database step's locked one).
     */
    async confirm(principal: Principal, tradeId: string, kind: ConfirmationKind, txHash: string): Promise<AppliedEvent> {
      const { trade } = await partyTrade(principal, tradeId);
      return deliverConfirmation(trade, kind, txHash);
    },

    /**
     * A transaction the books audit (audit/) found on chain for the trade, which no party reported:
     * verified and applied exactly like a party's confirmation. Throws `TradeNotFoundError`.
     */
    async confirmFound(tradeId: string, kind: ConfirmationKind, txHash: string): Promise<AppliedEvent> {
      const trade = await findTradeLifecycle(knex, tradeId);
      if (!trade) throw new TradeNotFoundError(tradeId);
      return deliverConfirmation(trade, kind, txHash);
    },
  };

  async function deliverConfirmation(trade: TradeLifecycleRecord, kind: ConfirmationKind, txHash: string): Promise<AppliedEvent> {
    const tradeId = trade.id;
    const confirming = confirmingTrade(trade);
    try {
      return await deps.orchestrator().confirm(confirming, { kind, txHash });
    } catch (error) {
      // The orchestrator may not have the trade yet (its start failed and the reconciler has not
      // come by): start it now and ask again. Costs a read only on the error path.
      if (!(await deps.starts.startIfPending(tradeId))) throw error;
      return deps.orchestrator().confirm(confirming, { kind, txHash });
    }
  }
}

export type TradesService = ReturnType<typeof createTradesService>;

/** What an orchestrator needs of a stored trade to verify and apply a confirmation. */
function confirmingTrade(trade: TradeLifecycleRecord): ConfirmingTrade {
  const { orderHash, adChainId, orderChainId, orderParams } = trade;
  return {
    tradeId: trade.id,
    state: stateOf(trade),
    order: {
      orderHash, adChainId, orderChainId, adManager: orderParams.adManager, orderPortal: orderParams.orderPortal,
      orderAmount: orderParams.orderAmount, adAmount: orderParams.adAmount,
    },
  };
}
