/** What the providers report as they work, for metrics and logs; names only, never URLs. */
export interface ProviderObserver {
  request(event: { chainId: string; kind: string; provider: string; method: string; result: string; seconds: number }): void;
  up(event: { chainId: string; kind: string; provider: string; up: boolean }): void;
  lag(event: { chainId: string; kind: string; provider: string; lag: number }): void;
  /** After each head probe: how many providers are usable against the chain's quorum. */
  chain(event: { chainId: string; kind: string; usable: number; quorum: number }): void;
  /** Providers answered a fact differently; `resolved` when one answer still reached the quorum. */
  disagreement(event: { chainId: string; kind: string; method: string; resolved: boolean; answers: { provider: string; answer: string }[] }): void;
}

/** Reports nothing (tests and tools that read one chain once). */
export const noProviderObserver: ProviderObserver = { request() {}, up() {}, lag() {}, chain() {}, disagreement() {} };
