import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { AppDeps } from '../../api/deps.ts';
import { PushedEventHub } from '../../api/streams/event-hub.ts';
import { createNotifications } from '../../db/notifications.ts';
import type { AuditReport } from '../../audit/audit.ts';
import { createAuthPurger, type AuthPurger } from '../../auth/purge.ts';
import { createSessionCache, type SessionCache } from '../../auth/session-cache.ts';
import type { RelayerSigners } from '../../chains/signers.ts';
import type { Chains } from '../../chains/chains.ts';
import { createSigningSwitch, stoppableSigner, type SigningSwitch } from '../../operator/signing-switch.ts';
import type { Config } from '../../config/config.ts';
import type { Secrets } from '../../config/secrets.ts';
import { MerkleTreeStore } from '../../prover/merkle/store.ts';
import type { Orchestrator, TradeActivities } from '../../trades/orchestrator.ts';
import type { TradeStarts } from '../../trades/start-reconciler.ts';
import { booksAudit } from '../parts/audit.ts';
import { chainReaders, relayerSigners, type ChainReaders } from '../parts/chains.ts';
import { keeperPart, startKeeperDuties, type KeeperDutiesLoop } from '../parts/keeper.ts';
import { scheduledJobs, type ScheduledJobs } from '../parts/jobs.ts';
import { embeddedOrchestrator, orchestratorSlot, temporalOrchestrator, type OrchestratorSlot } from '../parts/orchestrator.ts';
import { lazyProverPool, tradeActivities, type LazyProverPool } from '../parts/proving.ts';
import { startTelemetry, type ProcessTelemetry } from '../parts/telemetry.ts';
import { adsUseCase, authUseCase, once, tradeStarts, tradesUseCase, webhooksUseCase } from '../parts/use-cases.ts';

/**
 * What the API process holds (`npm run api`, and `npm start`'s embedded run): the app's
 * dependencies (use cases built on first use), the relayer's signer, the chain readers, and
 * whatever the orchestrator needs. Tests reach these through `RunningService.container`.
 */
export interface ApiParts extends AppDeps, ChainReaders {
  /** Only the API's secrets: the relayer keys (or the token's PIN), the JWT and SEP-10 keys (config/secrets.ts). */
  secrets: Secrets;
  /** The relayer's signer, refusing every signature while the operator has signing stopped (`signingSwitch`). */
  signers: RelayerSigners;
  /** The operator's stop-signing switch as this process reads it (operator/signing-switch.ts); started before serving. */
  signingSwitch: SigningSwitch;
  merkleStore: MerkleTreeStore;
  /** The proof pool (started by the first proof on the embedded runner); `reload` moves it to a native prover built meanwhile. */
  proverPool: LazyProverPool;
  /** One run of the books audit; scheduled here only on the embedded runner (BOOKS_AUDIT_CRON). */
  runAudit(): Promise<AuditReport>;
  /** The live sessions this process holds (auth/session-cache.ts), trusted while its LISTEN connection hears their changes. */
  sessionCache: SessionCache;
  /** Deletes expired challenges and ended sessions every AUTH_PURGE_INTERVAL_SECONDS, once started. */
  authPurger: AuthPurger;
  /** The orchestrator driving trades, once `startOrchestrator` resolved. */
  orchestrator(): Orchestrator;
  /**
   * On Temporal (TEMPORAL_ADDRESS set), a client that signals workflows (the worker runs the rest).
   * Otherwise the embedded runner over `databaseUrl`, and with it everything the worker would run:
   * proofs on this process's pool, the start reconciler, trade gauges, webhook delivery, the audit and
   * retention jobs.
   */
  startOrchestrator(databaseUrl: string): Promise<void>;
  /** The port the API bound (PORT 0 picks one): SIWE messages name it when SIWE_DOMAIN/SIWE_URI are unset. */
  apiListeningOn(port: number): void;
  /** Stops what was started (jobs, streams, purge, reconciler, orchestrator, pool, signer); the caller owns `knex`. */
  close(): Promise<void>;
}

/**
 * The API process's parts over an open, migrated database, for a role that signs (`api` or
 * `embedded`) and its resolved secrets; `gateChains` and `healthDetails` as in `chainReaders`
 * and `AppDeps` (the local run's devnet chain joining later).
 */
export function composeApi(config: Config, logger: Logger, knex: Knex, options: {
  role: 'api' | 'embedded'; secrets: Secrets; gateChains?: (chains: Chains) => Chains; healthDetails?: AppDeps['healthDetails'];
}): ApiParts {
  const { role, secrets } = options;
  // One LISTEN connection for the process: the event streams' news, the operator's switch, sessions' changes.
  const notifications = createNotifications(knex, {
    onError: (error) => logger.warn({ err: error }, 'LISTEN connection failed, reconnecting'),
  });
  const eventHub = new PushedEventHub(knex, logger, notifications);
  const telemetry = startTelemetry(config, role, knex, () => eventHub.size);
  const signingSwitch = createSigningSwitch(knex, logger, notifications);
  const sessionCache = createSessionCache(notifications);
  const held = relayerSigners(config, role, secrets);
  const signers: RelayerSigners = { ...held, signer: stoppableSigner(held.signer, signingSwitch.stopped) };
  const chains = chainReaders(knex, { registry: telemetry.registry, logger, config }, options.gateChains);
  // The trades use case is built below; the keeper's steps reach it when they run.
  const keeper = keeperPart(config, role, {
    knex, logger, registry: telemetry.registry, chains: () => chains.registryCache.allChains(),
    duties: { prepare: () => trades().prepareKeeperSends(), report: () => trades().reportKeeperSends() },
  });
  let keeperDuties: KeeperDutiesLoop | undefined;
  const merkleStore = new MerkleTreeStore(knex);
  const pool = lazyProverPool(config, telemetry.registry, logger);
  const orchestrator = orchestratorSlot();
  // The embedded runner's jobs are written in the transaction of the event they follow.
  const carryOutWithin = () => (orchestrator.started() ? orchestrator.get().carryOutWithin : undefined);
  const activities = tradeActivities(config, knex, chains, merkleStore, pool.get, carryOutWithin);
  const starts = tradeStarts(config, knex, logger, orchestrator.get, telemetry.trades);
  const trades = once(() => tradesUseCase(config, knex, logger, {
    chains, signers, activities, orchestrator: orchestrator.get, starts, metrics: telemetry.trades,
  }));
  const runAudit = booksAudit(config, knex, chains, telemetry.audit, trades);
  const jobs = scheduledJobs(config, knex, logger, { telemetry, runAudit });
  const authPurger = createAuthPurger({ knex, logger, intervalMs: config.AUTH_PURGE_INTERVAL_SECONDS * 1000 });
  let apiPort = config.PORT;
  const auth = once(() => authUseCase(config, secrets, knex, () => apiPort, sessionCache));
  const ads = once(() => adsUseCase(config, knex, chains, signers));
  const webhooks = once(() => webhooksUseCase(config, knex));
  return {
    config, logger, knex, secrets, signers, signingSwitch, ...chains, merkleStore, eventHub, authPurger, sessionCache, runAudit, proverPool: pool,
    healthDetails: options.healthDetails,
    metrics: telemetry.registry,
    get auth() {
      return auth();
    },
    get ads() {
      return ads();
    },
    get trades() {
      return trades();
    },
    get webhooks() {
      return webhooks();
    },
    orchestrator: orchestrator.get,
    apiListeningOn(port) {
      apiPort = port;
    },
    async startOrchestrator(databaseUrl) {
      await startOrchestrator(config, knex, logger, { databaseUrl, orchestrator, activities, telemetry, starts, jobs });
      // With Temporal the worker process sends the keeper's transactions; the embedded runner does here.
      if (!config.TEMPORAL_ADDRESS) keeper.start();
      // On Temporal another process sends: this one (it holds the request signer) prepares what is owed.
      else keeperDuties ??= startKeeperDuties(config, logger, () => trades().prepareKeeperSends());
    },
    async close() {
      await keeperDuties?.stop();
      await keeper.stop();
      await jobs.close();
      await eventHub.close();
      await authPurger.stop();
      await starts.stop();
      await orchestrator.close();
      await pool.close();
      signingSwitch.close();
      sessionCache.close();
      await notifications.close();
      await signers.signer.close();
      await telemetry.close();
    },
  };
}

/**
 * The orchestrator choice: a Temporal client when TEMPORAL_ADDRESS is set (the worker process runs
 * the lifecycle, the jobs and the reconciler); otherwise the embedded runner, and with it what the
 * worker would run, in this process.
 */
async function startOrchestrator(config: Config, knex: Knex, logger: Logger, held: {
  databaseUrl: string; orchestrator: OrchestratorSlot; activities: TradeActivities; telemetry: ProcessTelemetry; starts: TradeStarts; jobs: ScheduledJobs;
}): Promise<void> {
  const { databaseUrl, orchestrator, jobs } = held;
  if (orchestrator.started()) return;
  if (config.TEMPORAL_ADDRESS) {
    orchestrator.set(await temporalOrchestrator(config, knex, logger, { sweep: false }));
    return;
  }
  orchestrator.set(await embeddedOrchestrator(config, knex, logger, { databaseUrl, activities: held.activities, metrics: held.telemetry.trades }));
  // The embedded runner re-arms open trades on start; the reconciler also starts, on a schedule,
  // any trade whose timer was not armed after its reservation committed.
  held.starts.run();
  jobs.startTradeGauges(databaseUrl);
  await jobs.startWebhookDelivery(databaseUrl);
  await jobs.startAudit(databaseUrl);
  await jobs.startRetention(databaseUrl);
  logger.info('embedded trade orchestrator and webhook delivery started (pg-boss)');
}
