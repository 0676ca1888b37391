import type { Knex } from 'knex';
import type { OrderChainReader } from '../../chains/order-chain.ts';
import type { RelayerSigners } from '../../chains/signers.ts';
import type { ChainStateReader } from '../../chains/state.ts';
import type { TransactionVerifier } from '../../chains/verify.ts';
import type { ChainConnection, RegistryCache } from '../../db/repositories/registry-cache.ts';
import { ChainUnavailableError } from '../errors.ts';

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
  /** Asked at ad create whether the Maker's payout address can be paid the order token (Stellar: account, trustline). */
  orderChainReader: OrderChainReader;
  settings: AdsSettings;
  /** Milliseconds since the epoch; tests pin it. */
  now?: () => number;
}

/** What every ad use case is built with: the dependencies, the clock and the chain registry's look-up. */
export interface AdContext {
  deps: AdsDeps;
  knex: Knex;
  settings: AdsSettings;
  now(): Date;
  /** Requests whose deadline is before this can no longer be confirmed. */
  confirmCutoff(): Date;
  /** The registered chain, or `ChainUnavailableError` (503). */
  chainOf(chainId: string): Promise<ChainConnection>;
}

/** Builds the context the ad use cases share; the clock is `deps.now` when given (tests), else the wall clock. */
export function adContext(deps: AdsDeps): AdContext {
  const now = () => new Date(deps.now?.() ?? Date.now());
  return {
    deps,
    knex: deps.knex,
    settings: deps.settings,
    now,
    confirmCutoff: () => new Date(now().getTime() - deps.settings.confirmGraceSeconds * 1000),
    async chainOf(chainId) {
      const chain = await deps.registryCache.chain(chainId);
      if (!chain) throw new ChainUnavailableError(`chain ${chainId} is not registered`);
      return chain;
    },
  };
}
