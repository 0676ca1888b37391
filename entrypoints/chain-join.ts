import type { ChainClientFactory } from '../chains/verify.ts';
import { DomainError } from '../domain/index.ts';

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
 * A request needs a chain that has not joined the running service yet (the local Stellar network
 * still building or deploying): 503 `CHAIN_UNAVAILABLE` with `Retry-After`, through the API's one
 * mapping of `unavailable` domain errors, as anything else may throw it.
 */
export class ChainNotJoinedError extends DomainError {
  readonly code = 'CHAIN_UNAVAILABLE';
  readonly kind = 'unavailable';
  override readonly retryable = true;
  override readonly retryAfterSeconds: number;

  constructor(status: Pick<DevnetChainStatus, 'chainId' | 'name' | 'state'>) {
    super(status.state === 'ready'
      ? `chain ${status.chainId} (${status.name}) has just moved to a new address; retry`
      : `chain ${status.chainId} (${status.name}) is not available yet: ${status.state === 'failed' ? 'it failed to start (see the service log)' : `${status.state}, it joins when ready`}`);
    this.retryAfterSeconds = RETRY_AFTER_SECONDS[status.state];
  }
}

/**
 * A devnet chain that joins a service already serving: its state (for `/health` and the log) and a
 * gate on the RPC clients, so a request that would reach the chain at an address the registry held
 * before it joined (the demo registry's, a previous run's port: nothing there, or another
 * checkout's network) is refused with `ChainNotJoinedError` instead.
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

  /** Refuses clients for `url` (the registry's address for the chain before it joined) until `joinedAt` names another. */
  hold(url: string | null | undefined): void {
    if (url) this.heldUrls.add(url);
  }

  /** Ready at `rpcUrl`: clients for it pass from now on; other held addresses stay refused (they are stale). */
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

  /** `clients`, refusing (ChainNotJoinedError) a client for a held URL. */
  gate(clients: ChainClientFactory): ChainClientFactory {
    const check = (url: string) => {
      if (this.heldUrls.has(url)) throw new ChainNotJoinedError(this.status());
    };
    return {
      evm: (url) => (check(url), clients.evm(url)),
      stellar: (url) => (check(url), clients.stellar(url)),
    };
  }
}
