import type { ChainHealth } from '../chains/providers/providers.ts';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { AdsService } from '../ads/service.ts';
import type { AuthService } from '../auth/service.ts';
import type { TradesService } from '../trades/service.ts';
import type { Config } from '../config/config.ts';
import type { RegistryCache } from '../db/repositories/registry-cache.ts';
import type { PushedEventHub } from './streams/event-hub.ts';
import type { WebhooksService } from '../webhooks/service.ts';

/** Everything the HTTP layer needs, built once by the API process's composition (entrypoints/compose/api.ts). */
/** `/health`'s fields beyond the checks, in a local run. */
export interface HealthDetails {
  /** `process.version` of the process answering. */
  node: string;
  /** The local devnet's chains, when this process runs one: `ready` once every chain has joined. */
  devnet?: {
    ready: boolean;
    chains: { chainId: string; name: string; state: 'building' | 'starting' | 'ready' | 'failed'; detail?: string; seconds: number }[];
  };
  /** What proves in a local run, and the native prover's build while the first start makes it (snarkjs proving meanwhile). */
  prover?: { backend: 'native' | 'snarkjs'; state: 'building' | 'ready' | 'failed'; detail?: string; seconds: number };
}

export interface AppDeps {
  config: Config;
  knex: Knex;
  logger: Logger;
  metrics: Registry;
  registryCache: RegistryCache;
  auth: AuthService;
  ads: AdsService;
  trades: TradesService;
  /** Fans committed outbox events out to the event streams open in this process. */
  eventHub: PushedEventHub;
  webhooks: WebhooksService;
  /** Each registered chain's providers now, for `/health` (absent: chains are not reported). */
  chainHealth?: () => Promise<ChainHealth[]>;
  /**
   * What `/health` adds for a local run (`npm start` with its devnet): the Node version and the
   * devnet chains' states. Unset in a deployment: a public probe does not name its runtime's version.
   */
  healthDetails?: () => HealthDetails;
}
