import type { ChainKind } from '../domain/index.ts';
import type { ChainFacts, ChainReads } from './adapter.ts';
import { adapterOf } from './adapters.ts';
import { ChainUnavailableError } from './errors.ts';
import type { Finality } from './evm/verify.ts';
import { noProviderObserver, type ProviderObserver } from './providers/observer.ts';
import { createProviders, type ChainHealth, type Providers } from './providers/providers.ts';
import { rpcUrlsOf } from './providers/urls.ts';

/** A registered chain as the reads need it: its kind, id, providers and rules. */
export interface ChainTarget {
  kind: ChainKind;
  chainId: string;
  /** One provider (the registry's `rpcUrl`), or null/absent when `rpcUrls` lists them. */
  rpcUrl?: string | null;
  /** The chain's providers, best first. */
  rpcUrls?: readonly string[] | null;
  /** Providers that must agree on a fact; default a majority. */
  rpcQuorum?: number | null;
  confirmations?: number;
  finality?: Finality;
  networkPassphrase?: string | null;
}

/**
 * Every chain of a process, seen through its providers: the one dependency that reads chains
 * (instead of an EVM and a Stellar client). `of(chain)` is that chain's reads, built once per chain
 * and set of providers and kept for the life of this object.
 */
export interface Chains {
  /** The reads of `chain`; `ChainUnavailableError` (on use) when it has no provider registered. */
  of(chain: ChainTarget): ChainReads;
  /** The providers' state of `chain`, for `/health` and the metrics (known after at most `waitMs`, when given); null when it has none. */
  health(chain: ChainTarget, waitMs?: number): Promise<ChainHealth | null>;
}

export interface ChainsOptions {
  observer?: ProviderObserver;
  /** RPC_MAX_HEAD_LAG_BLOCKS. */
  maxHeadLagBlocks?: number;
  /** A read not answered within this many ms is also asked of the next provider. */
  stallMs?: number;
}

/** `Chains` over the registry's providers, reporting to `options.observer`. */
export function createChains(options: ChainsOptions = {}): Chains {
  const built = new Map<string, { reads: ChainReads; providers: Providers<unknown> }>();
  function build(chain: ChainTarget) {
    const urls = rpcUrlsOf(chain);
    const key = JSON.stringify([
      chain.kind, chain.chainId, urls, chain.rpcQuorum ?? null, chain.confirmations ?? 1, chain.finality ?? null, chain.networkPassphrase ?? null,
    ]);
    const found = built.get(key);
    if (found) return found;
    const adapter = adapterOf(chain.kind);
    const providers = createProviders({
      chainId: chain.chainId,
      kindLabel: chain.kind.toLowerCase(),
      urls,
      quorum: chain.rpcQuorum ?? undefined,
      connect: (url) => adapter.connect(url),
      head: (client) => adapter.head(client),
      maxHeadLagBlocks: options.maxHeadLagBlocks,
      stallMs: options.stallMs,
      observer: options.observer ?? noProviderObserver,
    });
    const facts: ChainFacts = {
      kind: chain.kind, chainId: chain.chainId, confirmations: chain.confirmations, finality: chain.finality, networkPassphrase: chain.networkPassphrase,
    };
    const entry = { reads: adapter.reads(facts, providers), providers };
    built.set(key, entry);
    return entry;
  }
  return {
    of(chain) {
      if (rpcUrlsOf(chain).length === 0) return unreadable(chain.chainId);
      return build(chain).reads;
    },
    async health(chain, waitMs) {
      if (rpcUrlsOf(chain).length === 0) return null;
      return build(chain).providers.health(waitMs);
    },
  };
}

/** The reads of a chain without providers: every one is `ChainUnavailableError`. */
function unreadable(chainId: string): ChainReads {
  return new Proxy({} as ChainReads, {
    get: () => () => Promise.reject(new ChainUnavailableError(`chain ${chainId} has no RPC URL registered: it cannot be read`)),
  });
}
