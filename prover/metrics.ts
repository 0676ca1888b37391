import { Counter, Gauge, Histogram, register as defaultRegistry, type Registry } from 'prom-client';

/** Something the queue-depth and busy-worker gauges can read when Prometheus scrapes. */
export interface PoolGaugeSource { readonly queueDepth: number; readonly busyWorkers: number }

/** The prover's Prometheus metrics (all named `relayer_prover_*`), shared by every pool on one registry. */
export interface ProverMetrics {
  proofs: Counter<'result'>;
  witnessSeconds: Histogram;
  proveSeconds: Histogram;
  verifySeconds: Histogram;
  /** Pools whose queue depth and busy workers the gauges sum at scrape time. */
  sources: Set<PoolGaugeSource>;
}

const byRegistry = new WeakMap<Registry, ProverMetrics>();
// Proofs take a few hundred ms on a laptop core; the buckets resolve 10 ms to 10 s.
const buckets = [0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2.5, 5, 10];

/**
 * The prover metrics on `registry` (default: prom-client's global registry), created on first use
 * and reused after, so several pools (or tests) can share one registry without a duplicate-name error.
 */
export function proverMetrics(registry: Registry = defaultRegistry): ProverMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const sources = new Set<PoolGaugeSource>();
  const sum = (pick: (s: PoolGaugeSource) => number) => [...sources].reduce((total, s) => total + pick(s), 0);
  const metrics: ProverMetrics = {
    proofs: new Counter({
      name: 'relayer_prover_proofs_total',
      help: 'Proof requests by result: ok, invalid_input, verification_failed, busy, closed, error',
      labelNames: ['result'],
      registers: [registry],
    }),
    witnessSeconds: new Histogram({
      name: 'relayer_prover_witness_duration_seconds',
      help: 'Witness calculation time per proof',
      buckets,
      registers: [registry],
    }),
    proveSeconds: new Histogram({ name: 'relayer_prover_prove_duration_seconds', help: 'Groth16 proving time per proof', buckets, registers: [registry] }),
    verifySeconds: new Histogram({
      name: 'relayer_prover_verify_duration_seconds',
      help: 'Verification time of each produced proof',
      buckets,
      registers: [registry],
    }),
    sources,
  };
  new Gauge({
    name: 'relayer_prover_queue_depth',
    help: 'Proofs waiting for a free worker',
    registers: [registry],
    collect() { this.set(sum((s) => s.queueDepth)); },
  });
  new Gauge({
    name: 'relayer_prover_busy_workers',
    help: 'Worker threads currently proving',
    registers: [registry],
    collect() { this.set(sum((s) => s.busyWorkers)); },
  });
  byRegistry.set(registry, metrics);
  return metrics;
}
