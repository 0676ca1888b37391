import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { available, balancesOf } from '../../ads/ledger.ts';
import { adForTrade, askLapsedHolds, reserve } from '../../ads/port.ts';
import type { Principal } from '../../domain/principal.ts';
import { adapterOf } from '../../chains/adapters.ts';
import { computeOrderHash, randomSalt, type OrderParams } from '../../chains/order.ts';
import type { DepositFunding } from '../../chains/order-chain.ts';
import { RequestFieldError } from '../../chains/request-schema.ts';
import { buildSignedCallData } from '../../chains/signed-call-data.ts';
import { computeOrderTimes } from '../../chains/timing.ts';
import type { AdRecord } from '../../db/repositories/ads.ts';
import { lockWalletReservations, openReservations } from '../../db/repositories/reservations.ts';
import type { ChainConnection, RouteWithTokens } from '../../db/repositories/registry-cache.ts';
import { appendPushedEvents } from '../../db/repositories/pushed-events.ts';
import { insertTrade } from '../../db/repositories/trade-lifecycle.ts';
import { recordTradeStart } from '../../db/repositories/trade-starts.ts';
import { randomSecret, secretCommitment } from '../../prover/commitments.ts';
import { INITIAL_STATE, depositTtlSeconds, followUpsOf, lockDeadline, reservationExpiry, start } from '../lifecycle/index.ts';
import { tradeSnapshot } from '../lifecycle/pushed-events.ts';
import { NotTradePartyError, TooManyReservationsError, TradeInputError } from '../errors.ts';
import { assertOwnFunding, type OwnFundingRequest } from './own-funding.ts';
import type { createUnbackedReservationsRecheck } from './unbacked-reservations.ts';
import { boundsProblem, priceDeposit } from './create-terms.ts';
import type { FollowUpsWithin, StartedTrade } from '../orchestrator.ts';
import { callTarget, type TradeContext } from './context.ts';

export interface CreateTradeInput {
  adId: string;
  routeId: string;
  amount: string;
  bridgerDstAddress: string;
}

/** What the request asks for, checked against the ad and its route: who deposits what, and what it takes of the ad. */
interface TradeTerms {
  ad: AdRecord;
  adChain: ChainConnection;
  orderChain: ChainConnection;
  route: RouteWithTokens;
  /** The caller's wallet on the order chain: the Bridger. */
  bridger: string;
  bridgerDst: string;
  amount: bigint;
  amountText: string;
  /** What the deposit takes of the ad, in the ad token's base units. */
  adAmount: bigint;
}

/** The order the Bridger will deposit against, and the relayer's signed `createOrder` call data for it. */
interface SignedDeposit {
  orderParams: OrderParams;
  orderHash: string;
  secret: bigint;
  commitment: string;
  signed: Awaited<ReturnType<typeof buildSignedCallData>>;
}

/** The caller's own funding, read once on the order chain and judged again under the locks. */
interface OwnFunding {
  funding: DepositFunding | null;
  /** The ad's open unfunded reservations, counted by the same read as the caller's (unlocked, like the ad). */
  adOpenReservations: number;
  own: OwnFundingRequest;
  query: { bridgerAddress: string; adId: string; orderTokenId: string };
}

/**
 * `POST /v1/trades`: reserves `amount` of the ad in one transaction holding the ad row lock, and
 * returns signed `OrderPortal.createOrder` call data with the order it commits to. The same
 * transaction records the intent to start the trade's lifecycle; the start itself follows the
 * commit, and if the orchestrator cannot take it now the reconciler does later (the reservation
 * still expires on time). The route must be one the service can price (domain/route-pricing.ts).
 * The reservation lives only as long as that deposit request; it needs the Bridger to hold the
 * deposit on the order chain (balance covering this and the wallet's other open reservations of the
 * token; an ERC-20 approved to the OrderPortal for it), and at most MAX_OPEN_RESERVATIONS_PER_WALLET
 * and MAX_OPEN_RESERVATIONS_PER_AD unfunded reservations are open at once. The caller's own funding
 * is judged first (trades/use-cases/own-funding.ts): a caller who cannot pay costs one read of its own and
 * nothing of anyone else's; one who can and finds the ad taken may start the throttled re-read of
 * the ad's reservations (trades/use-cases/unbacked-reservations.ts).
 */
export function createTrade(ctx: TradeContext, unbackedRecheck: ReturnType<typeof createUnbackedReservationsRecheck>) {
  return async (principal: Principal, input: CreateTradeInput) => {
    const terms = await readTerms(ctx, principal, input);
    const deposit = await signDeposit(ctx, terms);
    const funding = await judgeOwnFunding(ctx, terms);
    // An ad taken by reservations whose wallets no longer hold what they promised is freed of them
    // first; at most one such re-read per ad per UNBACKED_RESERVATIONS_RECHECK_SECONDS, shared.
    const { ad, route } = terms;
    // The ad's open reservations as counted with the caller's own (step 3): no read of them of its own.
    await unbackedRecheck.releaseIfTaken({
      id: ad.id, orderTokenId: ad.orderTokenId, available: available(balancesOf(ad)), openReservations: funding.adOpenReservations,
    }, {
      adAmount: terms.adAmount, maxOpenPerAd: ctx.settings.maxOpenReservationsPerAd, orderChain: terms.orderChain,
      orderToken: route.orderToken.address, now: new Date(ctx.nowMs()),
    });
    const { started, startedWithin } = await reserveAndRecord(ctx, terms, deposit, funding);
    // Started in the reservation's own transaction: only this process's workers are left to wake.
    if (startedWithin) {
      ctx.deps.starts.startedWithin();
      await ctx.deps.orchestrator().carryOut(started, { state: INITIAL_STATE, followUps: startedWithin, duplicate: false, carriedWithin: true });
    } else {
      await ctx.deps.starts.start(started);
    }
    return { tradeId: started.tradeId, reqContractDetails: depositAnswer(deposit) };
  };
}

/**
 * The deposit request as create answers it, and as it is kept with the trade: the one answer
 * `GET /v1/trades/:id/deposit-request` gives again (use-cases/deposit-request.ts), never signed twice.
 */
function depositAnswer({ signed, orderParams, orderHash, commitment }: SignedDeposit) {
  return { ...signed, orderParams, orderHash, secretCommitment: commitment };
}

/** Step 1: the ad (live), the chains, the caller as Bridger (not the ad's Maker), the amount in bounds and priced, the recipient payable on the ad chain. */
async function readTerms(ctx: TradeContext, principal: Principal, input: CreateTradeInput): Promise<TradeTerms> {
  const ad = await adForTrade(ctx.knex, input.adId);
  if (ad.routeId !== input.routeId) throw new TradeInputError('routeId', `must be the ad's route ${ad.routeId}, received '${input.routeId}'`);
  const adChain = await ctx.chainOf(ad.adChainId);
  const orderChain = await ctx.chainOf(ad.orderChainId);
  const bridger = principal.wallets[orderChain.kind];
  if (!bridger) throw new NotTradePartyError(`sign in with (or link) a ${orderChain.kind} wallet: the deposit is made on chain ${orderChain.chainId}`);
  if (Object.values(principal.wallets).includes(ad.creatorAddress)) throw new NotTradePartyError('nobody trades against their own ad');
  if (!adapterOf(adChain.kind).isRecipientAddress(input.bridgerDstAddress)) {
    throw new TradeInputError('bridgerDstAddress', `must be a ${adChain.kind} address of chain ${adChain.chainId}, received '${input.bridgerDstAddress}'`);
  }
  const bridgerDst = adapterOf(adChain.kind).canonicalAddress(input.bridgerDstAddress);
  const amount = BigInt(input.amount);
  // The same terms a quote previews (trades/use-cases/create-terms.ts).
  const outOfBounds = boundsProblem(ad, amount);
  if (outOfBounds !== null) {
    const below = ad.minAmount !== null && amount < BigInt(ad.minAmount);
    throw new TradeInputError('amount', outOfBounds, { code: below ? 'AMOUNT_BELOW_MINIMUM' : 'AMOUNT_ABOVE_MAXIMUM' });
  }
  const route = (await ctx.deps.registryCache.route(ad.routeId))!;
  const priced = priceDeposit(route, amount);
  if (!priced.ok) {
    throw new TradeInputError(priced.field, priced.problem, { code: priced.reason === 'INEXACT_CONVERSION' ? 'AMOUNT_NOT_CONVERTIBLE' : 'ROUTE_NOT_PRICED' });
  }
  // A recipient the ad chain cannot pay would leave the trade LOCKED for good after the deposit.
  const unpayable = await ctx.deps.orderChainReader.recipientProblem(adChain, route.adToken.address, bridgerDst, priced.adAmount);
  if (unpayable !== null) throw new TradeInputError('bridgerDstAddress', `cannot receive the ad token: ${unpayable}`, { code: 'RECIPIENT_CANNOT_RECEIVE' });
  return { ad, adChain, orderChain, route, bridger, bridgerDst, amount, amountText: input.amount, adAmount: priced.adAmount };
}

/** Step 2: the order's parameters and times, a fresh secret, and the relayer's signature on `createOrder`. */
async function signDeposit(ctx: TradeContext, terms: TradeTerms): Promise<SignedDeposit> {
  const { ad, adChain, orderChain, route } = terms;
  const depositTtl = depositTtlSeconds(ctx.settings);
  const times = computeOrderTimes(ctx.nowSeconds(), ctx.settings.orderTiming, depositTtl);
  const orderParams: OrderParams = {
    orderChainToken: route.orderToken.address,
    adChainToken: route.adToken.address,
    amount: terms.amountText,
    orderAmount: terms.amountText,
    adAmount: terms.adAmount.toString(),
    bridger: terms.bridger,
    orderRecipient: ad.creatorDstAddress,
    adId: ad.id,
    adCreator: ad.creatorAddress,
    adRecipient: terms.bridgerDst,
    salt: randomSalt(),
    orderChainId: orderChain.chainId,
    orderPortal: orderChain.orderPortalAddress,
    adChainId: adChain.chainId,
    adManager: adChain.adManagerAddress,
    ...times,
  };
  const secret = randomSecret();
  const commitment = secretCommitment(secret).toString();
  try {
    const orderHash = computeOrderHash(orderParams, ctx.deps.signers.domain);
    const signed = await buildSignedCallData({
      target: callTarget(orderChain, orderChain.orderPortalAddress),
      action: 'createOrder',
      fields: { orderHash, secretCommitment: commitment },
      signers: ctx.deps.signers,
      ttlSeconds: depositTtl,
      now: ctx.nowMs(),
    });
    return { orderParams, orderHash, secret, commitment, signed };
  } catch (error) {
    if (error instanceof RequestFieldError) throw new TradeInputError('amount', `does not fit the chains of this route: ${error.message}`);
    throw error;
  }
}

/** Step 3: the caller's own funding first: one who cannot pay makes the service read nothing of anyone else's (no cheap way to make it read others'). */
async function judgeOwnFunding(ctx: TradeContext, terms: TradeTerms): Promise<OwnFunding> {
  const { ad, orderChain, route, bridger } = terms;
  const funding = await ctx.deps.orderChainReader.depositFunding(orderChain, route.orderToken.address, bridger, orderChain.orderPortalAddress);
  const own: OwnFundingRequest = {
    bridger, amount: terms.amount, amountText: terms.amountText, orderPortal: orderChain.orderPortalAddress,
    maxOpenPerWallet: ctx.settings.maxOpenReservationsPerWallet,
    token: `${route.orderToken.symbol} (${route.orderToken.address}) on chain ${orderChain.chainId}`,
  };
  const query = { bridgerAddress: bridger, adId: ad.id, orderTokenId: ad.orderTokenId };
  const open = await openReservations(ctx.knex, { ...query, now: new Date(ctx.nowMs()) });
  assertOwnFunding(funding, open, own);
  return { funding, own, query, adOpenReservations: open.adCount };
}

/**
 * Step 4, one transaction: the reservation on the locked ad, the trade row, its `trade.created`
 * event and the intent to start it. Returns what the start needs.
 */
async function reserveAndRecord(ctx: TradeContext, terms: TradeTerms, deposit: SignedDeposit, funding: OwnFunding) {
  const { ad, adChain, orderChain, bridger } = terms;
  const { orderParams } = deposit;
  const tradeId = randomUUID();
  const reservationExpiresAt = reservationExpiry(Number(deposit.signed.deadline));
  const deadline = new Date(Number(lockDeadline(orderParams)) * 1000);
  const cutoff = new Date(ctx.nowMs() - ctx.settings.confirmGraceSeconds * 1000);
  // Abandoned withdraw and close requests give their holds back first: they block nothing. The
  // chain is asked about them before the ad row is locked (ads/port.ts).
  const lapsed = await askLapsedHolds(ctx.knex, ctx.deps.chainState, adChain, ad.id, cutoff, ctx.settings.signedRequestTtlSeconds);
  // An orchestrator whose work lives in this database starts the lifecycle inside the transaction;
  // any other is handed the start after the commit, through the start outbox.
  const within = carryOutWithin(ctx);
  const startFollowUps = followUpsOf(start().commands, { reservationExpiresAt: reservationExpiresAt.toISOString(), lockDeadline: deadline.toISOString() });
  await ctx.knex.transaction(async (trx) => {
    await reserve(trx, {
      adId: ad.id, amount: terms.adAmount, lapsed, closeCutoff: cutoff,
      what: `${terms.amountText} (${terms.adAmount} ${terms.route.adToken.symbol} base units)`,
      admit: () => admitWallet(ctx, trx, terms, funding),
    });
    await insertTrade(trx, {
      id: tradeId, routeId: ad.routeId, adId: ad.id, adCreatorAddress: ad.creatorAddress, bridgerAddress: bridger,
      bridgerDstAddress: terms.bridgerDst, adChainId: adChain.chainId, orderChainId: orderChain.chainId, adTokenId: ad.adTokenId,
      orderTokenId: ad.orderTokenId, amount: terms.amountText, orderParams: { ...orderParams }, orderHash: deposit.orderHash,
      secret: deposit.secret.toString(), secretCommitment: deposit.commitment, reservationExpiresAt, lockDeadline: deadline,
      depositRequest: depositAnswer(deposit),
    });
    await appendPushedEvents(trx, {
      tradeId, adId: ad.id, recipients: [ad.creatorAddress, bridger],
      events: [{ type: 'trade.created', data: {
        ...tradeSnapshot({ tradeId, adId: ad.id }, INITIAL_STATE), routeId: ad.routeId, amount: terms.amountText,
        orderAmount: orderParams.orderAmount, adAmount: orderParams.adAmount, adCreatorAddress: ad.creatorAddress, bridgerAddress: bridger,
      } }],
    });
    if (within) await within(trx, tradeId, startFollowUps);
    else await recordTradeStart(trx, tradeId, ctx.settings.startGraceSeconds);
  });
  const started: StartedTrade = { tradeId, adId: ad.id, routeId: ad.routeId, reservationExpiresAt, lockDeadline: deadline };
  return { started, startedWithin: within ? startFollowUps : undefined };
}

/** The orchestrator's `carryOutWithin`, if one is running and has it. */
function carryOutWithin(ctx: TradeContext): FollowUpsWithin | undefined {
  try {
    return ctx.deps.orchestrator().carryOutWithin;
  } catch {
    // Not started yet: the start outbox hands the trade to it once it is.
    return undefined;
  }
}

/**
 * The caller's own checks under the ad row lock, once the ad's own rules (ads/port.ts `reserve`)
 * passed: its funding judged again under its wallet's lock (the count and sum may have moved since),
 * and the ad's cap of unfunded reservations.
 */
async function admitWallet(ctx: TradeContext, trx: Knex.Transaction, terms: TradeTerms, { funding, own, query }: OwnFunding): Promise<void> {
  const { ad } = terms;
  await lockWalletReservations(trx, terms.bridger);
  const open = await openReservations(trx, { ...query, now: new Date(ctx.nowMs()) });
  assertOwnFunding(funding, open, own);
  if (open.adCount >= ctx.settings.maxOpenReservationsPerAd) {
    throw new TooManyReservationsError(`ad ${ad.id} already has ${open.adCount} trades awaiting their deposit `
      + `(at most ${ctx.settings.maxOpenReservationsPerAd}): try again when one is deposited or runs out`);
  }
}
