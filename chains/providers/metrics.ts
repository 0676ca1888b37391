import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ProviderObserver } from './observer.ts';

/**
 * Reports the providers' work as the `relayer_rpc_*` metrics on `registry` and logs each
 * disagreement with every answer. Labels name a chain by its id and a provider by its host (or
 * position), never by URL. `probe` is asked on each scrape, so heads and `up` are fresh even when
 * nothing reads a chain.
 */
export function providerMetrics(registry: Registry, logger: Logger, probe: () => Promise<void> = async () => {}): ProviderObserver {
  const requests = new Counter({
    name: 'relayer_rpc_requests_total',
    help: 'RPC calls by chain, provider, method and result (ok, answer: a chain error such as not found, error: no usable answer)',
    labelNames: ['chain', 'provider', 'method', 'result'], registers: [registry],
  });
  const latency = new Histogram({
    name: 'relayer_rpc_request_duration_seconds', help: 'RPC call latency by chain, provider and method',
    labelNames: ['chain', 'provider', 'method'], buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15], registers: [registry],
  });
  const up = new Gauge({
    name: 'relayer_rpc_provider_up', help: '1 when the provider answered its last head probe', labelNames: ['chain', 'provider'], registers: [registry],
    async collect() {
      await probe().catch(() => undefined);
    },
  });
  const lag = new Gauge({
    name: 'relayer_rpc_head_lag_blocks',
    help: 'Blocks (ledgers) the provider is behind the median head of the chain\'s providers (negative: ahead)',
    labelNames: ['chain', 'provider'], registers: [registry],
  });
  const disagreements = new Counter({
    name: 'relayer_rpc_disagreements_total', help: 'Facts on which a chain\'s providers answered differently (resolved: one answer still reached the quorum)',
    labelNames: ['chain', 'method', 'resolved'], registers: [registry],
  });
  const usable = new Gauge({
    name: 'relayer_rpc_usable_providers', help: 'Providers of the chain that are up and within RPC_MAX_HEAD_LAG_BLOCKS',
    labelNames: ['chain'], registers: [registry],
  });
  const quorum = new Gauge({
    name: 'relayer_rpc_quorum', help: 'Providers that must agree on a fact of the chain (rpcQuorum)', labelNames: ['chain'], registers: [registry],
  });
  return {
    request({ chainId, provider, method, result, seconds }) {
      requests.inc({ chain: chainId, provider, method, result });
      latency.observe({ chain: chainId, provider, method }, seconds);
    },
    up({ chainId, provider, up: isUp }) {
      up.set({ chain: chainId, provider }, isUp ? 1 : 0);
    },
    lag({ chainId, provider, lag: blocks }) {
      lag.set({ chain: chainId, provider }, blocks);
    },
    chain({ chainId, usable: count, quorum: needed }) {
      usable.set({ chain: chainId }, count);
      quorum.set({ chain: chainId }, needed);
      // Zero from the first report: a chain whose providers never disagreed shows 0 on the panel and
      // in the alert's expression, not "no data" (the fact every confirmation reads: verify).
      for (const resolved of ['true', 'false']) disagreements.inc({ chain: chainId, method: 'verify', resolved }, 0);
    },
    disagreement({ chainId, method, resolved, answers }) {
      disagreements.inc({ chain: chainId, method, resolved: String(resolved) });
      logger.error({ chain: chainId, method, resolved, answers }, resolved
        ? `providers of chain ${chainId} disagree on ${method}; the quorum's answer is used, the others are wrong`
        : `providers of chain ${chainId} disagree on ${method}: nothing is acted upon`);
    },
  };
}
