import type { Logger } from 'pino';
import type { VerificationKeyJson } from '../circuits/verification-key.ts';
import { ConfigError } from '../config/config.ts';
import type { Chains, ChainTarget } from './chains.ts';
import { rpcUrlsOf } from './providers/urls.ts';

/** What the check needs of a registered chain (db/repositories/registry-cache.ts `ChainConnection`). */
export interface VerifierChain extends ChainTarget {
  name: string;
  adManagerAddress: string;
  orderPortalAddress: string;
}

export { codeHoldsKey, verifierConstants } from './evm/verifier-code.ts';
export { sorobanKeyBytes } from './stellar/verifier-key.ts';

/**
 * What differs on one chain: for each of its two contracts, whether the verifier it checks proofs
 * with is the one `vk` verifies. EVM: the contract's `verifier()` address and that address's code
 * (it must push every constant of the key); Soroban: the contract's `verification_key` view. An
 * empty list: the chain's verifiers are this key's. RPC failures throw `RpcUnavailableError`.
 */
export async function verifierDifferences(chain: VerifierChain, vk: VerificationKeyJson, chains: Chains): Promise<string[]> {
  if (rpcUrlsOf(chain).length === 0) return [`has no rpcUrl in the registry: its verifiers cannot be read`];
  return chains.of(chain).verifierDifferences(
    [{ role: 'AdManager', address: chain.adManagerAddress }, { role: 'OrderPortal', address: chain.orderPortalAddress }], vk,
  );
}

/**
 * Start-up check of a process that proves or signs unlocks (production): every chain in the
 * registry must verify with this proving key's verification key, else the process refuses to start
 * (ConfigError, exit 78) naming each chain and contract that differs. A proof made with this key
 * would fail there (funds stuck until the refund) or, worse, that chain accepts proofs of a key
 * someone else holds. A chain that cannot be read now fails start-up (exit 1): its supervisor
 * retries, and nothing is served on a guess.
 */
export async function checkDeployedVerifiers(
  registered: VerifierChain[],
  vk: VerificationKeyJson,
  vkSha256: string,
  chains: Chains,
  logger: Logger,
): Promise<void> {
  const problems: string[] = [];
  for (const chain of registered) {
    for (const difference of await verifierDifferences(chain, vk, chains)) problems.push(`chain ${chain.name} (${chain.chainId}): ${difference}`);
  }
  if (problems.length > 0) {
    throw new ConfigError(`the deployed verifiers are not those of the proving key (verification key ` +
      `sha256 ${vkSha256}); refusing to serve:\n  ${problems.join('\n  ')}`);
  }
  logger.info({ chains: registered.map((chain) => chain.chainId), vkSha256 }, 'deployed verifiers match the proving key');
}
