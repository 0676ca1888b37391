import type { Knex } from 'knex';
import { ChainUnavailableError } from '../../ads/errors.ts';
import type { OrderChainReader } from '../../chains/order-chain.ts';
import type { RelayerSigners } from '../../chains/signers.ts';
import type { ChainStateReader } from '../../chains/state.ts';
import type { OrderTimingPolicy } from '../../domain/htlc.ts';
import type { TransactionVerifier } from '../../chains/verify.ts';
import type { ChainConnection, RegistryCache } from '../../db/repositories/registry-cache.ts';
import { systemClock, type Clock } from '../clock.ts';
import type { TradeEvent } from '../lifecycle/index.ts';
import type { AppliedEvent, Orchestrator, TradeActivities } from '../orchestrator.ts';
import type { TradeStarts } from '../start-reconciler.ts';

export interface TradesSettings {
  signedRequestTtlSeconds: number;
  confirmGraceSeconds: number;
  /** TRADE_RESERVATION_TTL_SECONDS: the deposit request and its reservation live at most this long. */
  reservationTtlSeconds: number;
  /** MAX_OPEN_RESERVATIONS_PER_WALLET and MAX_OPEN_RESERVATIONS_PER_AD: unfunded reservations at once. */
  maxOpenReservationsPerWallet: number;
  maxOpenReservationsPerAd: number;
  /** UNBACKED_RESERVATIONS_RECHECK_SECONDS: at most one re-read of an ad's reservations this often (use-cases/unbacked-reservations.ts); 10 when unset. */
  unbackedRecheckSeconds?: number;
  /** How long a new trade's start is left to its creating request before the reconciler may take it. */
  startGraceSeconds: number;
  /** KEEPER_UNLOCK_AFTER_SECONDS: a party's grace to send a due unlock before the keeper does; lifecycle's default when unset. */
  keeperUnlockAfterSeconds?: number;
  /** How far apart an order's times are placed (ORDER_LOCK_EXPIRY_SECONDS); lifecycle/windows.ts DEFAULT_ORDER_TIMING when unset. */
  orderTiming?: OrderTimingPolicy;
}

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
  /** Verification of a reported transaction and the one-transaction application of an event (applier/, wired by activities.ts). */
  events: Pick<TradeActivities, 'verifyConfirmation' | 'applyEvent'>;
  /** Observes each event applied by a use case (trade metrics). */
  onApplied?: (tradeId: string, applied: AppliedEvent, event: TradeEvent) => void | Promise<void>;
  /** Told when an applied event's follow-ups could not be handed to the orchestrator now (their outbox rows stay pending for its sweep). */
  onCarryOutFailed?: (tradeId: string, error: unknown) => void;
  /** Told when an owed keeper send could not be prepared now (the next pass tries again). */
  onKeeperPrepareFailed?: (send: { id: string; tradeId: string; action: string }, error: unknown) => void;
  /** Told when a final keeper send could not be handed to its trade now (the next pass tries again). */
  onKeeperReportDeferred?: (send: { id: string; tradeId: string; action: string }, error: unknown) => void;
  settings: TradesSettings;
  /** The clock (tests move it); the system's when unset. */
  now?: Clock;
}

/** What every trade use case is built with: the dependencies, the clock and the chain registry's look-up. */
export interface TradeContext {
  deps: TradesDeps;
  knex: Knex;
  settings: TradesSettings;
  nowMs(): number;
  nowSeconds(): number;
  /** The registered chain, or `ChainUnavailableError` (503). */
  chainOf(chainId: string): Promise<ChainConnection>;
}

/** Builds the context the use cases share; the clock is `deps.now` when given (tests), else the wall clock. */
export function tradeContext(deps: TradesDeps): TradeContext {
  const nowMs = deps.now ?? systemClock;
  return {
    deps,
    knex: deps.knex,
    settings: deps.settings,
    nowMs,
    nowSeconds: () => Math.floor(nowMs() / 1000),
    async chainOf(chainId) {
      const chain = await deps.registryCache.chain(chainId);
      if (!chain) throw new ChainUnavailableError(`chain ${chainId} is not registered`);
      return chain;
    },
  };
}

/** The contract a signed call is addressed to, in the shape `buildSignedCallData` takes. */
export function callTarget(chain: ChainConnection, contractAddress: string) {
  return { kind: chain.kind, chainId: chain.chainId, contractAddress, networkPassphrase: chain.networkPassphrase ?? undefined };
}
