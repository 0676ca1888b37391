import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { Client, Connection } from '@temporalio/client';
import { describe, expect, inject } from 'vitest';
import { tradeWorkflowId } from '../../workflows/temporal/workflows.ts';
import { AD_CHAIN, devnetClient, ORDER_CHAIN, tradeParties, type DevnetClient } from './devnet-client.ts';
import { startTestService, type TestService } from './service.ts';
import { leaseTemporalNamespace, startServiceProcess, stopped, type ServiceProcess, type TemporalLease } from './temporal-stack.ts';
import { call, loginEvm } from './wallets.ts';

/**
 * The two-chain scene most end-to-end files start from: the real service (its own database) on
 * either orchestrator, with the devnet on two anvil chains (ads on AD_CHAIN 31338, orders on
 * ORDER_CHAIN 31337), a devnet client, the Maker and the Bridger (anvil's well-known accounts)
 * signed in, and the TUSD -> TUSD route. What each file used to set up by hand, in one place.
 *
 * `orchestrator: 'temporal'` runs the API in this process with TEMPORAL_ADDRESS set, and one
 * `npm run worker` and one `npm run prover` (a single pool thread) as OS processes over the same
 * database, on a namespace of the test file's one shared `temporal server start-dev`.
 */
export interface Scene {
  orchestrator: Orchestrator;
  service: TestService;
  devnet: DevnetClient;
  /** Anvil's well-known Maker and Bridger: keys (for the chain) and accounts (for sign-in). */
  parties: ReturnType<typeof tradeParties>;
  makerToken: string;
  bridgerToken: string;
  /** The Bridger's user id (what the books and idempotency keys are scoped to). */
  bridgerUserId: string;
  /** The route of `symbol` (TUSD unless asked) from AD_CHAIN's token to ORDER_CHAIN's. */
  routeId: string;
  /** The Temporal side (orchestrator 'temporal' only). */
  temporal?: TemporalSide;
  /** GET /v1/trades/:id's body. */
  trade(id: string): Promise<any>;
  /** GET /v1/ads/:id's body (the books: available, locked). */
  ad(id: string): Promise<any>;
  /**
   * An ad of `amount` on the scene's route, funded on the AdManager by the Maker and confirmed:
   * its id. `bounds` are the ad's min/max trade amounts; `on` another service over the same chains,
   * with the Maker's `token` there.
   */
  createAd(amount: bigint, bounds?: { minAmount?: string; maxAmount?: string }, on?: TestService, token?: string): Promise<string>;
  /**
   * The /metrics text of the processes that keep the trade metrics: the service itself (embedded);
   * the worker (trade gauges) and the provers (deposit-to-proof) on Temporal.
   */
  tradeMetrics(): Promise<string>;
  /**
   * Another service over the same chains, on the same orchestrator (Temporal: its own namespace and
   * worker, no prover): its own database with the scene's chains, tokens and routes, the same
   * relayer keys (the contracts trust them), `env` on top. The scene's close stops it too.
   */
  sibling(env: Record<string, string>): Promise<TestService>;
  /** Closes the devnet client, the service and what runs beside it (safe to call twice). */
  close(): Promise<void>;
}

/** The two ways trades are carried out: pg-boss in the API's process, or Temporal workflows in a worker process. */
export type Orchestrator = 'embedded' | 'temporal';
/** Every orchestrator, for `describe.each(ORCHESTRATORS)`: a trade behaves the same on each. */
export const ORCHESTRATORS: readonly Orchestrator[] = ['embedded', 'temporal'];

/**
 * `body` once per orchestrator, as the suites `<orchestrator> orchestrator > name`: the two run side
 * by side (each starts its own scene: devnet, database, processes; nothing is shared but the file's
 * Temporal dev server, a namespace each), the tests of one run in order. A file's time is then its
 * slower orchestrator's, not the sum: most of it is waiting (chains, timers, proofs). Keep each
 * run's state (the scene, tokens, ids) inside `body`, never in the file's scope.
 */
export function describeOnEachOrchestrator(name: string, body: (orchestrator: Orchestrator) => void): void {
  describe.concurrent.each(ORCHESTRATORS)('%s orchestrator', (orchestrator) => {
    describe.sequential(name, () => body(orchestrator));
  });
}

/** The worker and prover processes of a Temporal scene, and the operators' views of its workflows. */
export interface TemporalSide {
  /** host:port of the shared dev server, and this scene's namespace there. */
  address: string;
  namespace: string;
  /** The scene's `npm run worker` (replace it after killing it: `worker = await start('worker')`). */
  worker: ServiceProcess;
  provers: ServiceProcess[];
  /** Starts another worker or prover over the scene's database and namespace (stopped by the scene's close). */
  start(kind: 'worker' | 'prover'): Promise<ServiceProcess>;
  /** `temporal workflow list --query ...` as an operator types it: the workflow ids it lists. */
  listWorkflows(query: string): Promise<string[]>;
  /** The trade's TradeStatus search attribute as Temporal indexes it. */
  indexedStatus(tradeId: string): Promise<string | undefined>;
}

export interface SceneOptions {
  /** Settings on top of the devnet's (the service's config names, as strings); given to a Temporal scene's worker and prover too. */
  env?: Record<string, string>;
  /** The route's token symbol on both chains (default TUSD). */
  symbol?: string;
  /** Which orchestrator carries out trades (default embedded). */
  orchestrator?: Orchestrator;
}

/** A service on an orchestrator, what runs beside it (Temporal: worker, prover), and how to stop it all. */
export interface OrchestratedService {
  service: TestService;
  /** The Temporal side (orchestrator 'temporal' only). */
  temporal?: TemporalSide;
  /** Stops the processes beside it, then the service (its database dropped), then gives back the namespace. */
  stop(): Promise<void>;
  /** The log lines (level info and up) of the service and the processes beside it that `watch` picked out (the first 20 of each). */
  watched(): string[];
}

/** What startOrchestratedService watches for. */
export interface WatchOptions {
  /** Picks out log lines (of every process of the stack, level info and up), e.g. one holding a secret. */
  watch?: (line: string) => boolean;
}

/** A pino logger at level info that keeps the lines `watch` picks out (the first 20) and nothing else. */
export function watchingLogger(watch: (line: string) => boolean): { logger: pino.Logger; watched: string[] } {
  const watched: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (watched.length < 20 && line && watch(line)) watched.push(line.slice(0, 1_000));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), watched };
}

const run = promisify(execFile);
/** Settings only the API's own process uses (it runs the devnet): not passed to the worker and prover. */
const API_ONLY = /^(DEVNET|STELLAR_DEVNET|PORT$|HOST$)/;

/**
 * The service (startTestService, `env` on top) on `orchestrator` over a fresh database; on Temporal
 * with a worker (and, unless `prover` is false, a prover) beside it, on a namespace of the file's
 * shared dev server. For files that need more than the two-chain scene (the Stellar devnet, their
 * own registry); the caller stops it in afterAll.
 */
export async function startOrchestratedService(
  orchestrator: Orchestrator, env: Record<string, string>, prover = true, options: WatchOptions = {},
): Promise<OrchestratedService> {
  const api = options.watch ? watchingLogger(options.watch) : undefined;
  if (orchestrator === 'embedded') {
    const service = await startTestService(env, { logger: api?.logger });
    return { service, stop: async () => { await proofsSettled(service); await service.close(); }, watched: () => [...(api?.watched ?? [])] };
  }
  const cli = inject('temporalCli');
  const lease: TemporalLease = await leaseTemporalNamespace(cli);
  const children: ServiceProcess[] = [];
  let service: TestService | undefined;
  const stopAll = async () => {
    for (const child of children) await stopped(child.child);
    await service?.close();
    await lease.release();
  };
  try {
    service = await startTestService({ ...env, TEMPORAL_ADDRESS: lease.address, TEMPORAL_NAMESPACE: lease.namespace }, { logger: api?.logger });
    const processEnv: Record<string, string> = {
      NODE_ENV: 'test', DATABASE_URL: service.databaseUrl, DATA_DIR: service.config.DATA_DIR, PROVER_POOL_SIZE: '1', KEEPER_ENABLED: 'false',
      ...Object.fromEntries(Object.entries(env).filter(([name]) => !API_ONLY.test(name))),
      TEMPORAL_ADDRESS: lease.address, TEMPORAL_NAMESPACE: lease.namespace,
    };
    const start = async (kind: 'worker' | 'prover') => {
      const started = await startServiceProcess(kind, processEnv, { watch: options.watch });
      children.push(started);
      return started;
    };
    const [worker, ...provers] = await Promise.all([start('worker'), ...(prover ? [start('prover')] : [])]);
    const temporal: TemporalSide = {
      address: lease.address, namespace: lease.namespace, worker: worker!, provers, start,
      async listWorkflows(query) {
        const { stdout } = await run(cli, ['workflow', 'list', '--address', lease.address, '--namespace', lease.namespace, '--query', query, '--output', 'json']);
        const parsed = stdout.trim() ? JSON.parse(stdout) : [];
        return (Array.isArray(parsed) ? parsed : [parsed]).map((w: any) => w.execution.workflowId);
      },
      async indexedStatus(tradeId) {
        const connection = await Connection.connect({ address: lease.address });
        try {
          const described = await new Client({ connection, namespace: lease.namespace }).workflow.getHandle(tradeWorkflowId(tradeId)).describe();
          return described.searchAttributes.TradeStatus?.[0] as string | undefined;
        } finally {
          await connection.close();
        }
      },
    };
    return { service, temporal, stop: stopAll, watched: () => [...(api?.watched ?? []), ...children.flatMap((child) => child.watched())] };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * Waits (up to 60 s) until no trade's proof is still being made: the embedded service's prover pool
 * waits for a running proof when it closes, and times out doing so on a loaded machine.
 */
async function proofsSettled(service: TestService): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const running = await service.knex('trades').where({ proof_state: 'running' }).whereIn('status', ['DEPOSITED', 'LOCKED']).first('id').catch(() => undefined);
    if (!running) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Starts the two-chain scene; the caller closes it in afterAll. Nothing is left running when a step fails. */
export async function startScene(options: SceneOptions = {}): Promise<Scene> {
  const symbol = options.symbol ?? 'TUSD';
  const orchestrator = options.orchestrator ?? 'embedded';
  const parties = tradeParties();
  const started = await startOrchestratedService(orchestrator, { DEVNET: 'on', DEVNET_PORT_A: '0', DEVNET_PORT_B: '0', ...options.env });
  const { service, temporal } = started;
  const siblings: Array<() => Promise<void>> = [];
  let devnet: DevnetClient | undefined;
  try {
    devnet = await devnetClient(service.devnet!.rpcUrls, service.devnet!.deployments);
    const makerToken: string = (await loginEvm(service, parties.maker)).body.tokens.access;
    const bridgerLogin = (await loginEvm(service, parties.bridger)).body;
    const routes = await call(service, 'GET', `/v1/routes?adChainId=${AD_CHAIN}&orderChainId=${ORDER_CHAIN}&symbol=${symbol}`);
    const routeId: string = routes.body.data.find((r: any) => r.adToken.symbol === symbol && r.orderToken.symbol === symbol).id;
    const chains = devnet;
    let closing: Promise<void> | undefined;
    const scene: Scene = {
      orchestrator, service, devnet: chains, parties, makerToken, bridgerToken: bridgerLogin.tokens.access, bridgerUserId: bridgerLogin.user.id, routeId, temporal,
      trade: async (id) => (await call(service, 'GET', `/v1/trades/${id}`)).body,
      ad: async (id) => (await call(service, 'GET', `/v1/ads/${id}`)).body,
      async createAd(amount, bounds = {}, on = service, token = makerToken) {
        const created = await call(on, 'POST', '/v1/ads/create', { routeId, creatorDstAddress: parties.maker.address, fundAmount: amount.toString(), ...bounds }, token);
        expect(created.status).toBe(200);
        await chains.approve(AD_CHAIN, parties.makerKey!.privateKey, 'adManager', amount);
        const txHash = await chains.send(AD_CHAIN, 'adManager', parties.makerKey!.privateKey, 'createAd', created.body);
        expect((await call(on, 'POST', `/v1/ads/${created.body.adId}/confirm`, { txHash }, token)).status).toBe(200);
        return created.body.adId;
      },
      async tradeMetrics() {
        const urls = temporal ? [temporal.worker, ...temporal.provers].map((p) => p.metricsUrl) : [`${service.metricsUrl ?? service.url}/metrics`];
        return (await Promise.all(urls.map((url) => fetch(url).then((r) => r.text(), () => '')))).join('\n');
      },
      async sibling(env) {
        const other = await startOrchestratedService(orchestrator, {
          RELAYER_EVM_PRIVATE_KEY: service.container.secrets.relayerEvmPrivateKey!,
          RELAYER_STELLAR_SECRET: service.container.secrets.relayerStellarSecret!,
          ...env,
        }, false);
        siblings.push(other.stop);
        await other.service.knex('chains').insert(await service.knex('chains').select('*'));
        await other.service.knex('tokens').insert(await service.knex('tokens').select('*'));
        await other.service.knex('routes').insert(await service.knex('routes').select('*'));
        return other.service;
      },
      close: () => (closing ??= (async () => {
        for (const stop of siblings) await stop();
        chains.close();
        await started.stop();
      })()),
    };
    return scene;
  } catch (error) {
    devnet?.close();
    await started.stop();
    throw error;
  }
}
