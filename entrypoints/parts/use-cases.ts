import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { createAdsService, type AdsService } from '../../ads/service.ts';
import { createAuthService, type AuthService } from '../../auth/service.ts';
import type { SessionCache } from '../../auth/session-cache.ts';
import type { RelayerSigners } from '../../chains/signers.ts';
import { createHorizonAccountReader } from '../../chains/stellar/horizon.ts';
import { DEFAULT_ORDER_TIMING } from '../../trades/lifecycle/index.ts';
import { siweSettingsOf, type Config } from '../../config/config.ts';
import type { Secrets } from '../../config/secrets.ts';
import { tracedActivities } from '../../telemetry/activities.ts';
import type { TradeMetrics } from '../../trades/observation/metrics.ts';
import type { Orchestrator, TradeActivities } from '../../trades/orchestrator.ts';
import { createTradesService, type TradesService } from '../../trades/service.ts';
import { createTradeStarts, type TradeStarts } from '../../trades/start-reconciler.ts';
import { createWebhooksService, type WebhooksService } from '../../webhooks/service.ts';
import type { ChainReaders } from './chains.ts';

/** A value made on first call, then the same one: a use case a process may never need is built only when asked for. */
export function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/** The settings ads and trades share: how long a signed request lives, and the grace after its deadline. */
function requestSettings(config: Config) {
  return { signedRequestTtlSeconds: config.SIGNED_REQUEST_TTL_SECONDS, confirmGraceSeconds: config.CONFIRM_GRACE_SECONDS };
}

/** What the trades use case runs on. */
export interface TradesParts {
  chains: ChainReaders;
  signers: RelayerSigners;
  activities: TradeActivities;
  orchestrator: () => Orchestrator;
  starts: TradeStarts;
  metrics: TradeMetrics;
}

/** The trades use case (trades/service.ts) with its settings from the config. */
export function tradesUseCase(config: Config, knex: Knex, logger: Logger, parts: TradesParts): TradesService {
  const { chains } = parts;
  return createTradesService({
    knex, registryCache: chains.registryCache, signers: parts.signers, verifier: chains.verifier, chainState: chains.chainState,
    orchestrator: parts.orchestrator, starts: parts.starts, orderChainReader: chains.orderChainReader,
    // Traced like the orchestrators' calls: a confirm's verification and write are a span of its request.
    events: tracedActivities(parts.activities),
    onApplied: parts.metrics.observe,
    onKeeperPrepareFailed: (send, error) =>
      logger.warn({ sendId: send.id, tradeId: send.tradeId, err: error }, 'keeper send not prepared yet; retried'),
    onKeeperReportDeferred: (send, error) =>
      logger.warn({ sendId: send.id, tradeId: send.tradeId, err: error }, 'keeper send not handed to its trade yet; retried'),
    onCarryOutFailed: (tradeId, error) => logger.warn({ tradeId, err: error }, 'follow-ups not handed to the orchestrator now; its sweep carries them out'),
    settings: {
      ...requestSettings(config),
      reservationTtlSeconds: config.TRADE_RESERVATION_TTL_SECONDS,
      startGraceSeconds: config.TRADE_START_RECONCILE_SECONDS,
      maxOpenReservationsPerWallet: config.MAX_OPEN_RESERVATIONS_PER_WALLET,
      maxOpenReservationsPerAd: config.MAX_OPEN_RESERVATIONS_PER_AD,
      unbackedRecheckSeconds: config.UNBACKED_RESERVATIONS_RECHECK_SECONDS,
      keeperUnlockAfterSeconds: config.KEEPER_UNLOCK_AFTER_SECONDS,
      orderTiming: { ...DEFAULT_ORDER_TIMING, lockExpirySeconds: config.ORDER_LOCK_EXPIRY_SECONDS },
    },
  });
}

/**
 * The durable start of trades: its reconciler (`run()`, every TRADE_START_RECONCILE_SECONDS) starts
 * any trade whose reservation committed but whose orchestration did not start.
 */
export function tradeStarts(config: Config, knex: Knex, logger: Logger, orchestrator: () => Orchestrator, metrics: TradeMetrics): TradeStarts {
  return createTradeStarts({
    knex, logger, orchestrator, onAttempt: metrics.startAttempted, intervalMs: config.TRADE_START_RECONCILE_SECONDS * 1000,
  });
}

/** The ads use case (ads/service.ts): the Maker's requests, signed by the relayer. */
export function adsUseCase(config: Config, knex: Knex, chains: ChainReaders, signers: RelayerSigners): AdsService {
  return createAdsService({
    knex, registryCache: chains.registryCache, signers, verifier: chains.verifier, chainState: chains.chainState,
    orderChainReader: chains.orderChainReader,
    settings: {
      ...requestSettings(config),
      maxPendingAdsPerUser: config.MAX_PENDING_ADS_PER_USER, maxOpenAdRequestsPerUser: config.MAX_OPEN_AD_REQUESTS_PER_USER,
    },
  });
}

/**
 * Sign-in and sessions (auth/service.ts) over the JWT and SEP-10 secrets; SIWE messages name `apiPort()` unless
 * SIWE_DOMAIN/SIWE_URI say; access tokens' sessions answered from `sessionCache` when it holds them.
 */
export function authUseCase(config: Config, secrets: Secrets, knex: Knex, apiPort: () => number, sessionCache?: SessionCache): AuthService {
  return createAuthService({
    config, secrets, knex, sessionCache,
    stellarAccounts: config.STELLAR_HORIZON_URL ? createHorizonAccountReader(config.STELLAR_HORIZON_URL) : undefined,
    siwe: () => siweSettingsOf(config, apiPort()),
  });
}

/** Users' webhook endpoints (registration, log; webhooks/service.ts). */
export function webhooksUseCase(config: Config, knex: Knex): WebhooksService {
  return createWebhooksService({
    knex,
    settings: {
      production: config.NODE_ENV === 'production', maxEndpointsPerUser: config.WEBHOOK_MAX_ENDPOINTS_PER_USER, previousSecretTtlSeconds: 24 * 3600,
    },
  });
}
