import {
  ChainFactsDisagreeError, ChainUnavailableError, ChainVerificationError, NotFinalError, RpcUnavailableError, TransactionNotFoundError,
} from '../errors.ts';
import { providerNames } from './names.ts';
import { noProviderObserver, type ProviderObserver } from './observer.ts';

/**
 * One chain seen through several RPC providers. Facts the books act on go through `fact`: the same
 * answer from `quorum` providers, or nothing is acted upon. Everything else goes through `read`:
 * the best-ranked healthy provider, the next one on failure or after a stall.
 */
export interface Providers<Client> {
  readonly chainId: string;
  /**
   * `read` asked of providers until `quorum` of them give one answer (`key` spells an answer for
   * comparison; JSON by default). Throws the agreed error when they agree on one (a failed
   * transaction), `ChainFactsDisagreeError` when no answer reaches the quorum because they differ,
   * `NotFinalError` when some have not seen it yet, `ChainUnavailableError` when too few answer.
   */
  fact<T>(method: string, read: (client: Client) => Promise<T>, key?: (value: T) => string): Promise<T>;
  /** `read` from the best-ranked healthy provider, failing over (and hedging after a stall). */
  read<T>(method: string, read: (client: Client) => Promise<T>): Promise<T>;
  /**
   * The providers' state now (heads asked again when older than the refresh interval); with `waitMs`,
   * the state known after at most that long (a provider slow to answer keeps what it last showed).
   */
  health(waitMs?: number): Promise<ChainHealth>;
}

/** What `/health` and the metrics show of a chain's providers; names only, never URLs. */
export interface ChainHealth {
  chainId: string;
  quorum: number;
  /** Up, and within the allowed lag of the median head. */
  usable: number;
  degraded: boolean;
  providers: { name: string; up: boolean; head: string | null; lag: string | null }[];
}

export interface ProviderSettings<Client> {
  chainId: string;
  /** The chain's kind as metrics name it (`evm`, `stellar`). */
  kindLabel: string;
  urls: string[];
  /** Providers that must agree on a fact; default a majority of `urls`. */
  quorum?: number;
  connect: (url: string) => Client;
  /** The provider's head: block number or ledger sequence. */
  head: (client: Client) => Promise<bigint>;
  /** A provider further than this from the median head is not used until it is back within it. */
  maxHeadLagBlocks?: number;
  /** A `read` not answered within this long is also asked of the next provider. */
  stallMs?: number;
  /** Heads are asked again when older than this. */
  refreshMs?: number;
  observer?: ProviderObserver;
}

interface Provider<Client> {
  name: string;
  /** Spellings of this provider's URL a failure's message may carry, replaced by `name` (never kept otherwise). */
  secrets: string[];
  client: Client;
  up: boolean;
  head: bigint | undefined;
  failures: number;
  latencyMs: number;
  /** Its head probe still unanswered, if any: never asked twice at once. */
  probing: Promise<void> | undefined;
}

type Outcome<T> =
  | { type: 'value'; value: T; key: string }
  | { type: 'answer'; error: Error; key: string; weak: boolean }
  | { type: 'failure'; error: unknown };

/** The default quorum of `count` providers: a majority. */
export function defaultQuorum(count: number): number {
  return Math.floor(count / 2) + 1;
}

/** Providers of one chain; see `Providers`. */
export function createProviders<Client>(settings: ProviderSettings<Client>): Providers<Client> {
  const observer = settings.observer ?? noProviderObserver;
  const names = providerNames(settings.urls);
  const providers: Provider<Client>[] = settings.urls.map((url, i) => ({
    name: names[i]!, secrets: urlSpellings(url), client: settings.connect(url), up: true, head: undefined, failures: 0, latencyMs: 0, probing: undefined,
  }));
  const quorum = Math.min(settings.quorum ?? defaultQuorum(providers.length), providers.length);
  const maxLag = BigInt(settings.maxHeadLagBlocks ?? 20);
  const refreshMs = settings.refreshMs ?? 2_000;
  const stallMs = settings.stallMs ?? 2_000;
  const { chainId, kindLabel } = settings;
  let refreshedAt = 0;
  let refreshing: Promise<void> | undefined;

  /** Runs one call on one provider, timing and counting it; a transport failure marks the provider down. */
  async function call<T>(provider: Provider<Client>, method: string, read: (client: Client) => Promise<T>): Promise<Outcome<T>> {
    const started = performance.now();
    const done = (result: string) => {
      const ms = performance.now() - started;
      provider.latencyMs = provider.latencyMs === 0 ? ms : provider.latencyMs * 0.8 + ms * 0.2;
      observer.request({ chainId, kind: kindLabel, provider: provider.name, method, result, seconds: ms / 1000 });
    };
    try {
      const value = await read(provider.client);
      done('ok');
      provider.failures = 0;
      return { type: 'value', value, key: '' };
    } catch (error) {
      if (error instanceof ChainVerificationError && !(error instanceof RpcUnavailableError)) {
        done('answer');
        const weak = error instanceof NotFinalError || error instanceof TransactionNotFoundError;
        return { type: 'answer', error, key: `error:${error.code}`, weak };
      }
      done('error');
      // Ranked lower until it answers again; only the head probe says whether it is up.
      provider.failures += 1;
      return { type: 'failure', error: redacted(provider, error) };
    }
  }

  function setUp(provider: Provider<Client>, up: boolean) {
    if (provider.up !== up) observer.up({ chainId, kind: kindLabel, provider: provider.name, up });
    provider.up = up;
  }

  /** Asks `provider` its head (once at a time) and marks it up or down by the answer. */
  function probe(provider: Provider<Client>): Promise<void> {
    provider.probing ??= (async () => {
      const outcome = await call(provider, 'head', settings.head);
      if (outcome.type === 'value') {
        provider.head = outcome.value;
        setUp(provider, true);
      } else setUp(provider, false);
    })().finally(() => { provider.probing = undefined; });
    return provider.probing;
  }

  async function refresh(force = false): Promise<void> {
    if (!force && performance.now() - refreshedAt < refreshMs) return;
    refreshing ??= (async () => {
      await Promise.all(providers.map(async (provider) => {
        // A provider slow to tell its head holds up no read for longer than the stall timeout: it keeps
        // what it last showed until its answer comes (its latency then ranks it last). One already known
        // to be slower than that is not waited for at all: its head is asked in the background.
        const pending = probe(provider);
        if (provider.head !== undefined && provider.latencyMs > stallMs) return;
        let timer: NodeJS.Timeout | undefined;
        const stalled = new Promise<void>((resolve) => { timer = setTimeout(resolve, stallMs); });
        await Promise.race([pending, stalled]);
        clearTimeout(timer);
      }));
      refreshedAt = performance.now();
      const top = highest();
      for (const provider of providers) {
        observer.up({ chainId, kind: kindLabel, provider: provider.name, up: provider.up });
        if (top !== undefined && provider.head !== undefined) {
          observer.lag({ chainId, kind: kindLabel, provider: provider.name, lag: Number(top - provider.head) });
        }
      }
      observer.chain({ chainId, kind: kindLabel, usable: providers.filter((p) => usable(p, top)).length, quorum });
    })().finally(() => { refreshing = undefined; });
    await refreshing;
  }

  /**
   * The head the others are measured against: the median of the answering providers' heads (the
   * higher middle one of an even count), so one provider claiming a far-off head cannot make the
   * honest ones look behind.
   */
  const highest = () => {
    const heads = providers.filter((p) => p.up && p.head !== undefined).map((p) => p.head!).sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
    return heads.length === 0 ? undefined : heads[Math.floor((heads.length - 1) / 2)];
  };
  const distance = (a: bigint, b: bigint) => (a > b ? a - b : b - a);
  const usable = (provider: Provider<Client>, top: bigint | undefined) =>
    provider.up && (top === undefined || provider.head === undefined || distance(top, provider.head) <= maxLag);

  /** Usable providers, best first: fewer recent failures, then lower latency, then listed order. */
  async function ranked(): Promise<Provider<Client>[]> {
    await refresh();
    const top = highest();
    return providers
      .map((provider, index) => ({ provider, index }))
      .filter(({ provider }) => usable(provider, top))
      .sort((a, b) => a.provider.failures - b.provider.failures || a.provider.latencyMs - b.provider.latencyMs || a.index - b.index)
      .map(({ provider }) => provider);
  }

  const unavailable = (why: string, cause?: unknown) => new ChainUnavailableError(`chain ${chainId} cannot be read: ${why}`, { cause });

  return {
    chainId,
    async fact(method, read, key = stableKey) {
      let candidates = await ranked();
      if (candidates.length < quorum) {
        await refresh(true);
        candidates = await ranked();
        if (candidates.length < quorum) throw unavailable(`${candidates.length} of its providers are usable, its quorum is ${quorum}`);
      }
      const outcomes: { name: string; outcome: Outcome<unknown> }[] = [];
      // Asks every provider of `batch` at once; done when all have answered or the answers so far decide
      // on a value or a failed transaction: a slow provider holds up no fact the others already agree on
      // (its late answer is left out). A shared "not found" still waits for everyone asked.
      const settled = (decided: ReturnType<typeof decide>) => decided.done && !(decided.outcome.type === 'answer' && decided.outcome.weak);
      const ask = (batch: Provider<Client>[]) => new Promise<void>((resolve) => {
        let left = batch.length;
        for (const provider of batch) {
          void call(provider, method, read).then((outcome) => {
            if (outcome.type === 'value') outcome.key = `value:${key(outcome.value)}`;
            outcomes.push({ name: provider.name, outcome: outcome as Outcome<unknown> });
            if (--left === 0 || settled(decide(outcomes, quorum))) resolve();
          });
        }
      });
      await ask(candidates.slice(0, quorum));
      let decided = decide(outcomes, quorum);
      if (!decided.done && candidates.length > quorum) {
        await ask(candidates.slice(quorum));
        decided = decide(outcomes, quorum);
      }
      const answered = [...outcomes];
      const strong = new Set(answered
        .filter(({ outcome }) => outcome.type !== 'failure' && !(outcome.type === 'answer' && outcome.weak))
        .map(({ outcome }) => (outcome as { key: string }).key));
      if (strong.size > 1) {
        observer.disagreement({
          chainId, kind: kindLabel, method, resolved: decided.done,
          answers: answered
            .filter(({ outcome }) => outcome.type !== 'failure')
            .map(({ name, outcome }) => ({ provider: name, answer: (outcome as { key: string }).key })),
        });
      }
      if (decided.done) {
        if (decided.outcome.type === 'value') return decided.outcome.value as never;
        throw (decided.outcome as { error: Error }).error;
      }
      if (strong.size > 1) throw new ChainFactsDisagreeError(`the providers of chain ${chainId} disagree on ${method}: nothing is acted upon`);
      const weak = outcomes.find(({ outcome }) => outcome.type === 'answer' && outcome.error instanceof NotFinalError);
      if (weak) throw (weak.outcome as { error: Error }).error;
      const agreed = outcomes.filter(({ outcome }) => outcome.type !== 'failure').length;
      if (agreed > 0) throw new NotFinalError(`${method} on chain ${chainId}: ${agreed} provider(s) answered, not ${quorum} alike yet`, 0, 1);
      const failure = outcomes.find(({ outcome }) => outcome.type === 'failure')?.outcome as { error: unknown } | undefined;
      if (failure && !(failure.error instanceof RpcUnavailableError) && failure.error instanceof Error) throw failure.error;
      throw unavailable(`fewer than ${quorum} of its providers answered ${method}`, failure?.error);
    },
    async read(method, read) {
      let candidates = await ranked();
      if (candidates.length === 0) {
        await refresh(true);
        candidates = await ranked();
        if (candidates.length === 0) throw unavailable('none of its providers is usable');
      }
      let lastFailure: unknown;
      for (let i = 0; i < candidates.length; i++) {
        const first = call(candidates[i]!, method, read);
        const next = candidates[i + 1];
        let outcome: Outcome<unknown>;
        if (next) {
          // A stalled provider is not waited for alone: after `stallMs` the next one is asked too.
          let timer: NodeJS.Timeout | undefined;
          const stalled = new Promise<'stalled'>((resolve) => { timer = setTimeout(() => resolve('stalled'), stallMs); });
          const raced = await Promise.race([first, stalled]);
          clearTimeout(timer);
          if (raced === 'stalled') {
            i += 1;
            const second = call(next, method, read);
            outcome = await firstSuccess([first, second]);
          } else outcome = raced;
        } else outcome = await first;
        if (outcome.type === 'value') return outcome.value as never;
        if (outcome.type === 'answer') throw outcome.error;
        lastFailure = outcome.error;
      }
      if (lastFailure instanceof Error && !(lastFailure instanceof RpcUnavailableError)) throw lastFailure;
      throw unavailable(`no provider answered ${method}`, lastFailure);
    },
    async health(waitMs) {
      if (waitMs === undefined) await refresh();
      else {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([refresh(), new Promise<void>((resolve) => { timer = setTimeout(resolve, waitMs); })]);
        clearTimeout(timer);
      }
      const top = highest();
      const count = providers.filter((p) => usable(p, top)).length;
      return {
        chainId, quorum, usable: count, degraded: count < quorum,
        providers: providers.map((p) => ({
          name: p.name, up: p.up, head: p.head?.toString() ?? null, lag: top !== undefined && p.head !== undefined ? (top - p.head).toString() : null,
        })),
      };
    },
  };
}

/**
 * A transport failure as callers may see and log it: the provider's name instead of any spelling of
 * its URL, and no cause (a client's error carries its request's URL, which may hold an API key).
 * The service's own errors (a bad argument) pass unchanged: they never hold a URL.
 */
function redacted(provider: { name: string; secrets: string[] }, error: unknown): unknown {
  if (!(error instanceof Error) || (error instanceof ChainVerificationError && !(error instanceof RpcUnavailableError))) return error;
  if (!(error instanceof RpcUnavailableError) && error.constructor !== Error && !isTransportError(error)) return error;
  let message = error.message;
  for (const secret of provider.secrets) message = message.split(secret).join(provider.name);
  message = message.replace(/([?&][^=&\s]*(key|token|secret|auth)[^=&\s]*=)[^&\s]*/gi, '$1***');
  return new RpcUnavailableError(`provider ${provider.name}: ${message}`);
}

/** A failure from the client or the network rather than from the service's own code. */
function isTransportError(error: Error): boolean {
  return !(error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError);
}

/** The URL as written, without its scheme, and its path with its query: what a client error may quote. */
function urlSpellings(url: string): string[] {
  const spellings = [url, url.replace(/^[a-z]+:\/\//i, '')];
  try {
    const parsed = new URL(url);
    if (parsed.pathname.length > 1 || parsed.search) spellings.push(`${parsed.pathname}${parsed.search}`);
    if (parsed.search) spellings.push(parsed.search.slice(1));
    if (parsed.pathname.length > 1) spellings.push(parsed.pathname);
    if (parsed.username || parsed.password) spellings.push(parsed.username, parsed.password);
  } catch {
    // Not a URL: nothing more to hide than the string itself.
  }
  return spellings.filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
}

/** The outcome `quorum` providers share, if any; a shared weak answer (not found) counts once all have answered it. */
function decide(outcomes: { outcome: Outcome<unknown> }[], quorum: number): { done: true; outcome: Outcome<unknown> } | { done: false } {
  const counts = new Map<string, { count: number; outcome: Outcome<unknown> }>();
  for (const { outcome } of outcomes) {
    if (outcome.type === 'failure') continue;
    const entry = counts.get(outcome.key) ?? { count: 0, outcome };
    entry.count += 1;
    counts.set(outcome.key, entry);
  }
  for (const { count, outcome } of counts.values()) {
    if (count < quorum) continue;
    if (outcome.type === 'answer' && outcome.weak && counts.size > 1) continue;
    return { done: true, outcome };
  }
  return { done: false };
}

/** The first value of two calls, else the first answer, else the last failure. */
async function firstSuccess<T>(calls: Promise<Outcome<T>>[]): Promise<Outcome<T>> {
  return new Promise((resolve) => {
    let left = calls.length;
    let fallback: Outcome<T> | undefined;
    for (const pending of calls) {
      void pending.then((outcome) => {
        if (outcome.type === 'value') resolve(outcome);
        else if (outcome.type === 'answer' || !fallback) fallback = outcome;
        if (--left === 0) resolve(fallback!);
      });
    }
  });
}

/** JSON with bigints as decimal strings and object keys sorted: two equal answers spell alike. */
export function stableKey(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return v.toString();
    if (v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)));
    }
    if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
    return v;
  }) ?? 'undefined';
}
