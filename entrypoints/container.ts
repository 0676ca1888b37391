import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createAdsService, type AdsService } from '../ads/service.ts';
import { createAuthPurger, type AuthPurger } from '../auth/purge.ts';
import { createAuthService, type AuthService } from '../auth/service.ts';
import type { RelayerSigners } from '../chains/signers.ts';
import { noRelayerSigner, relayerSignerFromConfig } from '../chains/signer/from-config.ts';
import { createHorizonAccountReader } from '../chains/stellar/horizon.ts';
import { createChainStateReader, type ChainStateReader } from '../chains/state.ts';
import { createOrderChainReader } from '../chains/order-chain.ts';
import { cachedChainClients, createTransactionVerifier, type ChainClientFactory, type TransactionVerifier } from '../chains/verify.ts';
import { siweSettingsOf, type Config } from '../config/config.ts';
import { DEFAULT_ORDER_TIMING } from '../chains/timing.ts';
import { PushedEventHub } from '../api/streams/event-hub.ts';
import { startWebhookDispatcher, type WebhookDispatcher } from '../webhooks/dispatcher.ts';
import { pushMetrics } from '../webhooks/metrics.ts';
import { createWebhooksService, type WebhooksService } from '../webhooks/service.ts';
import { RegistryCache } from '../db/repositories/registry-cache.ts';
import { MerkleTreeStore } from '../prover/merkle/store.ts';
import { proverMetrics } from '../prover/metrics.ts';
import { defaultProverPoolSize, ProverPool } from '../prover/pool.ts';
import { resolveSecrets, roleSignsRequests, type ProcessRole, type Secrets } from '../config/secrets.ts';
import { createTradesService, type TradesService } from '../trades/service.ts';
import { createActivities } from '../trades/activities.ts';
import { createTradeStarts, type TradeStarts } from '../trades/start-reconciler.ts';
import { resumableTrades } from '../trades/resume.ts';
import { followUpOutbox } from '../trades/follow-up-outbox.ts';
import { startEmbeddedOrchestrator } from '../workflows/embedded/orchestrator.ts';
import { tracedActivities } from '../telemetry/activities.ts';
import { currentTracing, startTracing } from '../telemetry/tracing.ts';
import { tradeMetrics, type TradeMetrics } from '../trades/metrics.ts';
import { tradeGaugeSampler, type TradeGaugeSampler } from '../trades/gauges.ts';
import { sessionLeaderLock } from '../db/leader-lock.ts';
import { databaseUpProbe } from './database-up.ts';
import { createAudit, type AuditReport } from '../audit/audit.ts';
import { startAuditJob, type AuditJob } from '../audit/job.ts';
import { startRetentionJob, type RetentionJob } from '../retention/job.ts';
import { retentionMetrics } from '../retention/metrics.ts';
import { runRetention } from '../retention/retention.ts';
import { auditMetrics } from '../audit/metrics.ts';
import { createTemporalOrchestrator } from '../workflows/temporal/client.ts';
import { temporalConnectOptions } from '../workflows/temporal/connection-options.ts';
import type { Orchestrator, TradeActivities } from '../trades/orchestrator.ts';

/**
 * Every long-lived dependency of a process, built once from the config. The API, the worker and
 * the prover process take what they need from here; nothing below builds its own.
 */
export interface Container {
  config: Config;
  logger: Logger;
  knex: Knex;
  secrets: Secrets;
  /** The registry that `/metrics` serves: every metric of the process goes here. */
  metrics: Registry;
  signers: RelayerSigners;
  registryCache: RegistryCache;
  /** One RPC client per chain endpoint, shared by everything in the process that reads chains. */
  chainClients: ChainClientFactory;
  verifier: TransactionVerifier;
  /** Reads contract state when no client reports anything (hold expiry, the audit). */
  chainState: ChainStateReader;
  /** The books audit (audit/): one run, its report observed by the metrics. */
  runAudit(): Promise<AuditReport>;
  /** Starts the audit's pg-boss cron job (BOOKS_AUDIT_CRON; nothing when `off`). Stopped by `close`. */
  startAuditJob(databaseUrl: string): Promise<void>;
  /** Starts the retention job's pg-boss cron job (RETENTION_CRON; nothing when `off`), beside the audit's. Stopped by `close`. */
  startRetentionJob(databaseUrl: string): Promise<void>;
  merkleStore: MerkleTreeStore;
  auth: AuthService;
  /**
   * Deletes expired challenges and ended sessions every AUTH_PURGE_INTERVAL_SECONDS: started by the
   * process that serves the API (entrypoints/service.ts), stopped by `close`.
   */
  authPurger: AuthPurger;
  ads: AdsService;
  trades: TradesService;
  /** The event streams' fan-out (LISTENs only once a stream is open, so processes without streams hold no connection). */
  eventHub: PushedEventHub;
  /** Users' webhook endpoints (registration, log). */
  webhooks: WebhooksService;
  /**
   * Starts delivering webhooks from this process (pg-boss over `databaseUrl`): the embedded run
   * starts it with its orchestrator, the Temporal `worker` process on its own.
   */
  startWebhookDispatcher(databaseUrl: string): Promise<void>;
  /** The lifecycle steps both orchestrators run. */
  activities: TradeActivities;
  /**
   * The durable start of trades: its reconciler runs (`tradeStarts.run()`) in the worker on Temporal
   * and in the API on the embedded runner; `close` stops it.
   */
  tradeStarts: TradeStarts;
  /** The orchestrator driving trades; available once `startOrchestrator` resolved. */
  orchestrator(): Orchestrator;
  /** Starts the orchestrator: Temporal when TEMPORAL_ADDRESS is set, else the embedded pg-boss runner over `databaseUrl`. */
  startOrchestrator(databaseUrl: string): Promise<void>;
  /** Observes each applied trade event (the lifecycle worker feeds it on Temporal; the embedded runner itself). */
  tradeMetrics: TradeMetrics;
  /**
   * Starts sampling the trade gauges (trades/gauges.ts) every METRICS_SAMPLE_SECONDS, from the
   * process that runs the scheduled jobs (the worker on Temporal, the API on the embedded runner);
   * of several such processes the one holding the sampler's advisory lock reads and serves them.
   * Stopped by `close`.
   */
  startTradeGauges(databaseUrl: string): void;
  /**
   * The proof pool, started on first use: its threads load the zkey (about a second and a few
   * hundred MB each), which a process that never proves should not pay for. Its metrics are on
   * `metrics` from the start.
   */
  prover(): ProverPool;
  /** Tells the container the port the API bound (PORT 0 picks one): SIWE messages name it when SIWE_DOMAIN/SIWE_URI are unset. */
  apiListeningOn(port: number): void;
  /** Stops what the container started (purge schedule, orchestrator, prover pool); the caller owns `knex`. */
  close(): Promise<void>;
}

export interface ContainerOptions {
  /** Secrets already resolved (entry points resolve them before anything starts, to fail fast). */
  secrets?: Secrets;
  /** What this process runs as (default `embedded`): decides which secrets it resolves and whether it builds a relayer signer. */
  role?: ProcessRole;
}

/** A value made on first call, then the same one. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/** Builds the container over an open, migrated database. */
export function buildContainer(config: Config, logger: Logger, knex: Knex, options: ContainerOptions = {}): Container {
  const role = options.role ?? 'embedded';
  // OpenTelemetry spans exported by OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (telemetry/README.md); nothing otherwise.
  startTracing(`relayer-${role}`);
  const secrets = options.secrets ?? resolveSecrets(config, role);
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  proverMetrics(metrics);
  let pool: ProverPool | undefined;
  const signers: RelayerSigners = {
    // A worker or prover signs nothing: it holds no relayer key and opens no token.
    signer: roleSignsRequests(role) ? relayerSignerFromConfig(config, secrets) : noRelayerSigner(role),
    domain: { name: config.EIP712_DOMAIN_NAME, version: config.EIP712_DOMAIN_VERSION },
  };
  const registryCache = new RegistryCache(knex);
  const clients = cachedChainClients();
  const verifier = createTransactionVerifier(clients);
  const chainState = createChainStateReader(clients);
  const merkleStore = new MerkleTreeStore(knex);
  const prover = () => {
    if (!pool) {
      pool = new ProverPool({
        size: config.PROVER_POOL_SIZE, maxQueue: config.PROVER_QUEUE_MAX, registry: metrics,
        backend: config.PROVER_BACKEND, nativeThreads: config.PROVER_NATIVE_THREADS,
      });
      logger.info({ size: pool.size }, 'prover pool started');
    }
    return pool;
  };
  const orderChainReader = createOrderChainReader(clients);
  const activities = createActivities({
    knex, registryCache, verifier, merkleStore, prover, evmClient: clients.evm, stellarClient: clients.stellar, orderChainReader,
    chainState, signedRequestTtlSeconds: config.SIGNED_REQUEST_TTL_SECONDS,
  });
  const trades = tradeMetrics(metrics, knex);
  const sampleMs = config.METRICS_SAMPLE_SECONDS * 1000;
  const databaseUp = databaseUpProbe(metrics, knex, { intervalMs: sampleMs, timeoutMs: Math.min(2_000, sampleMs) });
  let tradeGauges: TradeGaugeSampler | undefined;
  const audited = auditMetrics(metrics);
  const audit = createAudit({
    knex, registryCache, verifier, chainState, signedRequestTtlSeconds: config.SIGNED_REQUEST_TTL_SECONDS,
    confirmGraceSeconds: config.CONFIRM_GRACE_SECONDS,
    budget: {
      maxItems: config.BOOKS_AUDIT_PHASE_MAX_ITEMS, seconds: config.BOOKS_AUDIT_PHASE_SECONDS, concurrency: config.BOOKS_AUDIT_READ_CONCURRENCY,
    },
    confirmTrade: (tradeId, confirmation) => tradeUseCases().confirmFound(tradeId, confirmation.kind, confirmation.txHash),
  });
  const runAudit = async () => {
    audited.started();
    const report = await audit.run();
    audited.observe(report);
    return report;
  };
  let auditJob: AuditJob | undefined;
  const retained = retentionMetrics(metrics);
  const retentionPolicy = {
    pushedEventDays: config.RETENTION_PUSHED_EVENT_DAYS, webhookDeliveryDays: config.RETENTION_WEBHOOK_DELIVERY_DAYS,
    chainEventDays: config.RETENTION_CHAIN_EVENT_DAYS, adRequestDays: config.RETENTION_AD_REQUEST_DAYS,
    followUpDays: config.RETENTION_FOLLOW_UP_DAYS, batchSize: config.RETENTION_BATCH_SIZE,
  };
  let retentionJob: RetentionJob | undefined;
  let orchestrator: Orchestrator | undefined;
  const authPurger = createAuthPurger({ knex, logger, intervalMs: config.AUTH_PURGE_INTERVAL_SECONDS * 1000 });
  let apiPort = config.PORT;
  const eventHub = new PushedEventHub(knex, logger);
  const webhookMetrics = pushMetrics(metrics, () => eventHub.size);
  let webhookDispatcher: WebhookDispatcher | undefined;
  const startWebhooks = async (databaseUrl: string) => {
    webhookDispatcher ??= await startWebhookDispatcher({
      databaseUrl, knex, logger, metrics: webhookMetrics,
      settings: {
        timeoutSeconds: config.WEBHOOK_TIMEOUT_SECONDS, publicOnly: config.NODE_ENV === 'production',
        retryBaseSeconds: config.WEBHOOK_RETRY_BASE_SECONDS, retryMaxSeconds: config.WEBHOOK_RETRY_MAX_SECONDS,
        disableAfterFailures: config.WEBHOOK_DISABLE_AFTER_FAILURES, disableAfterSeconds: config.WEBHOOK_DISABLE_AFTER_SECONDS,
        sweepSeconds: config.WEBHOOK_SWEEP_SECONDS,
      },
    });
  };
  const settings = { signedRequestTtlSeconds: config.SIGNED_REQUEST_TTL_SECONDS, confirmGraceSeconds: config.CONFIRM_GRACE_SECONDS };
  const currentOrchestrator = () => {
    if (!orchestrator) throw new Error('the orchestrator is not started');
    return orchestrator;
  };
  // The use cases (auth, ads, trades, webhooks) are built on first use: only the API asks for them,
  // so the worker and prover processes never build what they do not run.
  const auth = once(() => createAuthService({
    config, secrets, knex,
    stellarAccounts: config.STELLAR_HORIZON_URL ? createHorizonAccountReader(config.STELLAR_HORIZON_URL) : undefined,
    siwe: () => siweSettingsOf(config, apiPort),
  }));
  const webhooks = once(() => createWebhooksService({
    knex,
    settings: { production: config.NODE_ENV === 'production', maxEndpointsPerUser: config.WEBHOOK_MAX_ENDPOINTS_PER_USER, previousSecretTtlSeconds: 24 * 3600 },
  }));
  const ads = once(() => createAdsService({
    knex, registryCache, signers, verifier, chainState, orderChainReader,
    settings: { ...settings, maxPendingAdsPerUser: config.MAX_PENDING_ADS_PER_USER, maxOpenAdRequestsPerUser: config.MAX_OPEN_AD_REQUESTS_PER_USER },
  }));
  const tradeUseCases = once(() => createTradesService({
    knex,
    registryCache,
    signers,
    verifier,
    chainState,
    orchestrator: currentOrchestrator,
    starts: tradeStarts,
    orderChainReader,
    // Traced like the orchestrators' calls: a confirm's verification and write are a span of its request.
    events: tracedActivities(activities),
    onApplied: trades.observe,
    onCarryOutFailed: (tradeId, error) => logger.warn({ tradeId, err: error }, 'follow-ups not handed to the orchestrator now; its sweep carries them out'),
    settings: {
      ...settings,
      reservationTtlSeconds: config.TRADE_RESERVATION_TTL_SECONDS,
      startGraceSeconds: config.TRADE_START_RECONCILE_SECONDS,
      maxOpenReservationsPerWallet: config.MAX_OPEN_RESERVATIONS_PER_WALLET,
      maxOpenReservationsPerAd: config.MAX_OPEN_RESERVATIONS_PER_AD,
      unbackedRecheckSeconds: config.UNBACKED_RESERVATIONS_RECHECK_SECONDS,
      orderTiming: { ...DEFAULT_ORDER_TIMING, lockExpirySeconds: config.ORDER_LOCK_EXPIRY_SECONDS },
    },
  }));
  const tradeStarts = createTradeStarts({
    knex, logger, orchestrator: currentOrchestrator, onAttempt: trades.startAttempted, intervalMs: config.TRADE_START_RECONCILE_SECONDS * 1000,
  });
  return {
    config,
    logger,
    knex,
    secrets,
    metrics,
    signers,
    registryCache,
    chainClients: clients,
    verifier,
    chainState,
    merkleStore,
    get auth() {
      return auth();
    },
    authPurger,
    get ads() {
      return ads();
    },
    get trades() {
      return tradeUseCases();
    },
    eventHub,
    get webhooks() {
      return webhooks();
    },
    startWebhookDispatcher: startWebhooks,
    activities,
    tradeStarts,
    orchestrator: currentOrchestrator,
    tradeMetrics: trades,
    startTradeGauges(databaseUrl) {
      tradeGauges ??= tradeGaugeSampler({
        registry: metrics, knex, logger, intervalMs: sampleMs, lock: sessionLeaderLock(databaseUrl, 'relayer:trade-gauges'),
      });
      tradeGauges.start();
    },
    apiListeningOn(port) {
      apiPort = port;
    },
    async startOrchestrator(databaseUrl) {
      if (orchestrator) return;
      if (config.TEMPORAL_ADDRESS) {
        orchestrator = await createTemporalOrchestrator({
          ...temporalConnectOptions(config),
          outbox: followUpOutbox(knex),
          // The worker hands over follow-ups an API process left pending (it stopped, or Temporal was unreachable, after the commit).
          sweepIntervalMs: role === 'worker' ? config.TRADE_START_RECONCILE_SECONDS * 1000 : 0,
          onSweepFailed: (error) => logger.warn({ err: error }, 'handing pending follow-ups to their workflows failed; retrying next interval'),
          namespace: config.TEMPORAL_NAMESPACE,
          taskQueue: config.TEMPORAL_TASK_QUEUE,
          proofsTaskQueue: config.TEMPORAL_PROOFS_TASK_QUEUE,
        });
        logger.info({ address: config.TEMPORAL_ADDRESS, namespace: config.TEMPORAL_NAMESPACE }, 'trades run on Temporal');
        return;
      }
      orchestrator = await startEmbeddedOrchestrator({
        databaseUrl,
        activities: tracedActivities(activities),
        outbox: followUpOutbox(knex),
        logger,
        onApplied: trades.observe,
        onTimerRearmed: trades.timerRearmed,
        proveConcurrency: config.PROVER_POOL_SIZE ?? defaultProverPoolSize(),
        resumeIntervalMs: config.EMBEDDED_TIMER_RESUME_SECONDS * 1000,
        openTrades: () => resumableTrades(knex),
      });
      // The embedded runner re-arms open trades on start; the reconciler also starts, on a schedule,
      // any trade whose timer was not armed after its reservation committed.
      tradeStarts.run();
      this.startTradeGauges(databaseUrl);
      await startWebhooks(databaseUrl);
      await this.startAuditJob(databaseUrl);
      await this.startRetentionJob(databaseUrl);
      logger.info('embedded trade orchestrator and webhook delivery started (pg-boss)');
    },
    prover,
    runAudit,
    async startAuditJob(databaseUrl) {
      if (auditJob || config.BOOKS_AUDIT_CRON === 'off') return;
      auditJob = await startAuditJob({ databaseUrl, cron: config.BOOKS_AUDIT_CRON, logger, run: runAudit });
    },
    async startRetentionJob(databaseUrl) {
      if (retentionJob || config.RETENTION_CRON === 'off') return;
      retentionJob = await startRetentionJob({
        databaseUrl, cron: config.RETENTION_CRON, logger,
        run: () => retained.track(() => runRetention(knex, retentionPolicy)),
      });
    },
    async close() {
      await retentionJob?.stop();
      databaseUp.stop();
      await tradeGauges?.stop();
      await auditJob?.stop();
      await eventHub.close();
      await webhookDispatcher?.close();
      await authPurger.stop();
      await tradeStarts.stop();
      await orchestrator?.close();
      await pool?.close();
      await signers.signer.close();
      await currentTracing()?.flush();
    },
  };
}
