import type { Chains, ChainTarget } from './chains.ts';
import type { ChainHealth } from './providers/providers.ts';
import { rpcUrlsOf } from './providers/urls.ts';

/** A chain's health not known within this long is reported degraded (a health check must answer quickly). */
const HEALTH_TIMEOUT_MS = 2_000;

/**
 * Every registered chain's providers now, each bounded in time: a chain whose providers do not answer
 * in time is degraded. Chains without providers are left out (nothing reads them).
 */
export async function chainsHealth(registry: { allChains(): Promise<ChainTarget[]> }, chains: Chains): Promise<ChainHealth[]> {
  const registered = (await registry.allChains()).filter((chain) => rpcUrlsOf(chain).length > 0);
  return Promise.all(registered.map(async (chain) => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<ChainHealth>((resolve) => {
      timer = setTimeout(() => resolve({ chainId: chain.chainId, quorum: 0, usable: 0, degraded: true, providers: [] }), HEALTH_TIMEOUT_MS);
    });
    try {
      // Half the time for the head probes: a provider slow to answer is then shown as last seen, and
      // the chain is not reported degraded for one slow provider.
      const known = chains.health(chain, HEALTH_TIMEOUT_MS / 2);
      return (await Promise.race([known, late])) ?? { chainId: chain.chainId, quorum: 0, usable: 0, degraded: true, providers: [] };
    } finally {
      clearTimeout(timer);
    }
  }));
}
