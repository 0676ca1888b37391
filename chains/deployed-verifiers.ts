import type { Logger } from 'pino';
import type { VerificationKeyJson } from '../circuits/verification-key.ts';
import { ConfigError } from '../config/config.ts';
import type { Chains, ChainTarget } from './chains.ts';
import { rpcUrlsOf } from './providers/urls.ts';
import { ChainVerificationError } from './errors.ts';

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
 * someone else holds. A chain that cannot be read now does not stop start-up (a provider outage must
 * not crash-loop the fleet): it is logged, and checked again every `recheckMs` until it can be read;
 * nothing reaches that chain meanwhile (its reads answer CHAIN_UNAVAILABLE). A difference found then
 * is `onLateRefusal`'s (the entry point stops the process, exit 78).
 */
export async function checkDeployedVerifiers(
  registered: VerifierChain[],
  vk: VerificationKeyJson,
  vkSha256: string,
  chains: Chains,
  logger: Logger,
  options: { recheckMs?: number; onLateRefusal?: (refusal: ConfigError) => void } = {},
): Promise<void> {
  const refusal = (problems: string[]) => new ConfigError(`the deployed verifiers are not those of the proving key (verification key ` +
    `sha256 ${vkSha256}); refusing to serve:\n  ${problems.join('\n  ')}`);
  const { problems, unreadable } = await differencesOf(registered, vk, chains);
  if (problems.length > 0) throw refusal(problems);
  const checked = registered.filter((chain) => !unreadable.includes(chain));
  logger.info({ chains: checked.map((chain) => chain.chainId), vkSha256 }, 'deployed verifiers match the proving key');
  if (unreadable.length === 0) return;
  logger.warn({ chains: unreadable.map((chain) => chain.chainId) }, 'chains cannot be read now: their deployed verifiers are checked once they can');
  let pending = unreadable;
  const timer = setInterval(() => {
    void differencesOf(pending, vk, chains).then(({ problems: late, unreadable: still }) => {
      if (late.length > 0) {
        clearInterval(timer);
        const error = refusal(late);
        if (options.onLateRefusal) options.onLateRefusal(error);
        else logger.fatal({ err: error }, error.message);
        return;
      }
      const now = pending.filter((chain) => !still.includes(chain));
      if (now.length > 0) logger.info({ chains: now.map((chain) => chain.chainId), vkSha256 }, 'deployed verifiers match the proving key');
      pending = still;
      if (pending.length === 0) clearInterval(timer);
    }, (error: unknown) => logger.warn({ err: error }, 'deployed verifiers could not be checked again'));
  }, options.recheckMs ?? 30_000);
  timer.unref();
}

/** Each chain's differences, and the chains that cannot be read now (their providers are out or disagree). */
async function differencesOf(
  registered: VerifierChain[], vk: VerificationKeyJson, chains: Chains,
): Promise<{ problems: string[]; unreadable: VerifierChain[] }> {
  const problems: string[] = [];
  const unreadable: VerifierChain[] = [];
  for (const chain of registered) {
    try {
      for (const difference of await verifierDifferences(chain, vk, chains)) problems.push(`chain ${chain.name} (${chain.chainId}): ${difference}`);
    } catch (error) {
      if (!(error instanceof ChainVerificationError) || !error.retryable) throw error;
      unreadable.push(chain);
    }
  }
  return { problems, unreadable };
}
