import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../../config/config.ts';
import { roleSignsRequests, type ProcessRole, type Secrets } from '../../config/secrets.ts';
import { createOrderChainReader, type OrderChainReader } from '../../chains/order-chain.ts';
import { noRelayerSigner, relayerSignerFromConfig } from '../../chains/signer/from-config.ts';
import type { RelayerSigners } from '../../chains/signers.ts';
import type { Registry } from 'prom-client';
import { chainsHealth } from '../../chains/health.ts';
import { createChains, type Chains } from '../../chains/chains.ts';
import { providerMetrics } from '../../chains/providers/metrics.ts';
import type { ChainHealth } from '../../chains/providers/providers.ts';
import { createChainStateReader, type ChainStateReader } from '../../chains/state.ts';
import { createTransactionVerifier, type TransactionVerifier } from '../../chains/verify.ts';
import { RegistryCache } from '../../db/repositories/registry-cache.ts';

/** The registry and what reads the chains it names, shared by every part of a process. */
export interface ChainReaders {
  registryCache: RegistryCache;
  /** Every chain through its providers, shared by everything in the process that reads chains. */
  chains: Chains;
  /** Each registered chain's providers now (`/health`, the metrics); a chain without providers is left out. */
  chainHealth?: () => Promise<ChainHealth[]>;
  verifier: TransactionVerifier;
  /** Reads contract state when no client reports anything (hold expiry, lock windows, the audit). */
  chainState: ChainStateReader;
  /** Asks the order chain whether a deposit happened before a reservation is given back. */
  orderChainReader: OrderChainReader;
}

/**
 * The chain readers of a process over its database's registry (cached), with one set of providers per
 * chain, reporting the `relayer_rpc_*` metrics on `telemetry.registry` when given; `gate` wraps them
 * (a devnet chain joining later refuses its reads until then).
 */
export function chainReaders(
  knex: Knex, telemetry?: { registry: Registry; logger: Logger; config: Config }, gate: (chains: Chains) => Chains = (chains) => chains,
): ChainReaders {
  const registryCache = new RegistryCache(knex);
  let chains: Chains | undefined;
  const health = () => chainsHealth(registryCache, chains!);
  chains = gate(createChains(telemetry ? {
    observer: providerMetrics(telemetry.registry, telemetry.logger, async () => void (await health())),
    maxHeadLagBlocks: telemetry.config.RPC_MAX_HEAD_LAG_BLOCKS,
    stallMs: telemetry.config.RPC_STALL_TIMEOUT_MS,
  } : {}));
  return {
    registryCache,
    chains,
    chainHealth: health,
    verifier: createTransactionVerifier(chains),
    chainState: createChainStateReader(chains),
    orderChainReader: createOrderChainReader(chains),
  };
}

/**
 * The relayer's signer and EIP-712 domain. Only a role that signs requests (api, embedded) builds
 * one from its secrets (RELAYER_SIGNER); any other (the worker) gets one that refuses every call:
 * it holds no relayer key and opens no token.
 */
export function relayerSigners(config: Config, role: ProcessRole, secrets: Secrets = {}): RelayerSigners {
  return {
    signer: roleSignsRequests(role) ? relayerSignerFromConfig(config, secrets) : noRelayerSigner(role),
    domain: { name: config.EIP712_DOMAIN_NAME, version: config.EIP712_DOMAIN_VERSION },
  };
}

/**
 * Reads the relayer signer's two public keys before anything is served: with RELAYER_SIGNER=pkcs11 a
 * token that is missing, locked or without the labelled keys stops start-up (ConfigError, exit 78)
 * rather than failing the first signed request.
 */
export async function relayerSignerReady({ signer }: RelayerSigners, logger: Logger): Promise<void> {
  try {
    const [evmAddress, stellarPublicKey] = await Promise.all([signer.evmAddress(), signer.stellarPublicKey()]);
    logger.info({ backend: signer.backend, evmAddress, stellarPublicKey }, `relayer signer ready (RELAYER_SIGNER=${signer.backend})`);
  } catch (error) {
    throw new ConfigError(`RELAYER_SIGNER=${signer.backend}: ${(error as Error).message}`);
  }
}
