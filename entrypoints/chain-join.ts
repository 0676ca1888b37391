import type { ChainReads } from '../chains/adapter.ts';
import type { Chains, ChainTarget } from '../chains/chains.ts';
import { ChainUnavailableError } from '../chains/errors.ts';
import { rpcUrlsOf } from '../chains/providers/urls.ts';

/** Where a chain of the local devnet is: being built, starting (node up, contracts deploying), ready, or failed to join. */
export type DevnetChainState = 'building' | 'starting' | 'ready' | 'failed';

/** One devnet chain as `/health` and the terminal report it. */
export interface DevnetChainStatus {
  chainId: string;
  name: string;
  state: DevnetChainState;
  /** What it is doing, or why it failed. */
  detail?: string;
  /** Seconds since it entered `state`. */
  seconds: number;
}

/** How long a client should wait before asking again, by what the chain is doing. */
const RETRY_AFTER_SECONDS: Record<DevnetChainState, number> = { building: 30, starting: 5, ready: 2, failed: 60 };

/**
 * A devnet chain that joins a service already serving (the local Stellar network while it builds):
 * its state, for `/health` and the log, and a gate on the process's chain reads. Until it joined,
 * every read of it fails with the chains' own `ChainUnavailableError` (503 `CHAIN_UNAVAILABLE` with
 * `Retry-After` through the API's one mapping), its health is not probed at an address the registry
 * held before it joined (the demo registry's, a previous run's port: nothing there, or another
 * checkout's network); after, that stale address stays refused while the registry cache still has it.
 */
export class ChainJoin {
  private current: DevnetChainState;
  private detail: string | undefined;
  private since = performance.now();
  /** RPC URLs the registry named for this chain before it joined. */
  private readonly heldUrls = new Set<string>();

  constructor(readonly chainId: string, readonly name: string, state: DevnetChainState, detail?: string) {
    this.current = state;
    this.detail = detail;
  }

  get state(): DevnetChainState {
    return this.current;
  }

  /** Moves to `state`; `detail` says what it does now (or why it failed). */
  enter(state: DevnetChainState, detail?: string): void {
    this.current = state;
    this.detail = detail;
    this.since = performance.now();
  }

  /** Refuses reads at `url` (the registry's address for the chain before it joined) unless `joinedAt` names it. */
  hold(url: string | null | undefined): void {
    if (url) this.heldUrls.add(url);
  }

  /** Ready at `rpcUrl`: reads through it pass from now on; other held addresses stay refused (they are stale). */
  joinedAt(rpcUrl: string, detail?: string): void {
    this.heldUrls.delete(rpcUrl);
    this.enter('ready', detail);
  }

  status(): DevnetChainStatus {
    return {
      chainId: this.chainId, name: this.name, state: this.current,
      ...(this.detail ? { detail: this.detail } : {}),
      seconds: Math.floor((performance.now() - this.since) / 1000),
    };
  }

  /** The error a read of this chain gets now, or undefined when `chain` may be read. */
  private refusal(chain: ChainTarget): ChainUnavailableError | undefined {
    if (chain.chainId !== this.chainId) return undefined;
    if (this.current === 'ready' && !rpcUrlsOf(chain).some((url) => this.heldUrls.has(url))) return undefined;
    const why = this.current === 'failed' ? 'it failed to start (see the service log)' : `${this.current}, it joins when ready`;
    const message = this.current === 'ready'
      ? `chain ${this.chainId} (${this.name}) has just moved to a new address; retry`
      : `chain ${this.chainId} (${this.name}) is not available yet: ${why}`;
    return new ChainUnavailableError(message, { retryAfterSeconds: RETRY_AFTER_SECONDS[this.current] });
  }

  /** `chains`, refusing this chain's reads (and leaving its health unprobed) until it joined. */
  gate(chains: Chains): Chains {
    return {
      of: (chain) => {
        const refused = this.refusal(chain);
        if (!refused) return chains.of(chain);
        return new Proxy({} as ChainReads, { get: () => () => Promise.reject(refused) });
      },
      health: (chain, waitMs) => (this.refusal(chain) ? Promise.resolve(null) : chains.health(chain, waitMs)),
    };
  }
}
