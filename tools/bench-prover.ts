/**
 * `npm run bench:prover [-- N]`: N proofs (default 20; or BENCH_PROOFS) through the pool with the
 * native backend (pool size x threads per proof: 1 x CPUs, CPUs x 1, CPUs x CPUs), through the pool
 * with the snarkjs backend at every size from 1 to the CPU count, then the bare
 * `snarkjs.groth16.fullProve` loop, on the same circuit and inputs, in this process. Each pool run
 * keeps exactly `size` proofs in flight (no queueing), so latency is the time of one proof under
 * full load. One warm-up proof per thread is not counted. BENCH_RUNS=native,snarkjs,bare picks runs.
 * Prints proofs/min, p50/p95 latency, peak RSS, the main event loop's longest block, and the
 * ratios against the targets.
 */
import { availableParallelism, loadavg } from 'node:os';
import { monitorEventLoopDelay, performance as perf } from 'node:perf_hooks';
import * as snarkjs from 'snarkjs';
import { Registry } from 'prom-client';
import { artifacts } from '../circuits/artifacts.ts';
import { sampleProofInput } from '../test/support/circuit-vectors.ts';
import { NATIVE_PROVER_BINARY, nativeProverBuilt } from '../prover/native/binary.ts';
import { ProverPool, type ProverPoolOptions } from '../prover/pool.ts';
import type { CircuitInput } from '../prover/proof-input.ts';

interface RunStats { label: string; proofs: number; perMinute: number; p50: number; p95: number; peakRssMb: number; maxBlockMs: number; mainBusy: number; load: string }

const count = Number(process.argv[2] ?? process.env.BENCH_PROOFS ?? 20);
if (!Number.isInteger(count) || count < 1) throw new RangeError(`proof count must be a positive integer, received '${process.argv[2] ?? process.env.BENCH_PROOFS}'`);
const cpus = availableParallelism();
const inputs: CircuitInput[] = Array.from({ length: count }, () => sampleProofInput().input);
const runs = new Set((process.env.BENCH_RUNS ?? 'native,snarkjs,bare').split(','));
/** The configuration PROVER_POOL_SIZE and PROVER_NATIVE_THREADS default to (see prover/README.md). */
const nativeDefault = { size: cpus, threads: 1 };

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

/** Runs `work` while sampling RSS and the main loop's delay; `prove(i)` is called `count` times with `concurrency` in flight. */
async function measure(label: string, concurrency: number, prove: (input: CircuitInput) => Promise<unknown>): Promise<RunStats> {
  const loop = monitorEventLoopDelay({ resolution: 5 });
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => { peakRss = Math.max(peakRss, process.memoryUsage.rss()); }, 20);
  const latencies: number[] = [];
  const loadBefore = load();
  loop.enable();
  const elu = perf.eventLoopUtilization();
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < inputs.length) {
      const input = inputs[next++]!;
      const t = performance.now();
      await prove(input);
      latencies.push(performance.now() - t);
    }
  }));
  const elapsed = performance.now() - started;
  loop.disable();
  const mainBusy = perf.eventLoopUtilization(elu).utilization;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
  latencies.sort((a, b) => a - b);
  return {
    label,
    proofs: latencies.length,
    perMinute: (latencies.length / elapsed) * 60_000,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    peakRssMb: peakRss / 2 ** 20,
    maxBlockMs: loop.max / 1e6,
    mainBusy,
    load: `${loadBefore} -> ${load()}`,
  };
}

const results: RunStats[] = [];
console.log(`${count} proofs per run, ${cpus} CPUs, load average ${load()}`);

async function poolRun(label: string, options: ProverPoolOptions & { size: number }): Promise<RunStats> {
  const pool = new ProverPool({ ...options, maxQueue: count, registry: new Registry() });
  await pool.ready();
  await Promise.all(inputs.slice(0, options.size).map((input) => pool.prove(input))); // warm-up, one per thread
  const stats = await measure(label, options.size, (input) => pool.prove(input));
  await pool.close();
  console.log(`${label} done`);
  results.push(stats);
  return stats;
}

let native: RunStats | undefined;
if (runs.has('native')) {
  if (!nativeProverBuilt()) {
    console.log(`native prover not built (${NATIVE_PROVER_BINARY}): run npm run build:native; skipping its runs`);
  } else {
    const configs = [{ size: 1, threads: cpus }, { size: cpus, threads: 1 }, { size: cpus, threads: cpus }]
      .filter((c, i, all) => all.findIndex((o) => o.size === c.size && o.threads === c.threads) === i);
    for (const { size, threads } of configs) {
      const stats = await poolRun(`native pool ${size} x ${threads} thread${threads > 1 ? 's' : ''}`, { size, backend: 'native', nativeThreads: threads });
      if (size === nativeDefault.size && threads === nativeDefault.threads) native = stats;
    }
  }
}

let snarkjsPool: RunStats | undefined;
if (runs.has('snarkjs')) {
  for (let size = 1; size <= cpus; size++) snarkjsPool = await poolRun(`snarkjs pool ${size}`, { size, backend: 'snarkjs' });
}

let bare: RunStats | undefined;
if (runs.has('bare')) {
  const zkey = artifacts.zkey;
  await snarkjs.groth16.fullProve({ ...inputs[0]! }, artifacts.wasm, zkey); // warm-up: builds snarkjs's curve
  bare = await measure('bare fullProve', 1, (input) => snarkjs.groth16.fullProve({ ...input }, artifacts.wasm, zkey));
  results.push(bare);
  // snarkjs's multi-threaded curve owns worker threads; the process would never exit without this.
  await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
}

// "main loop busy" is event-loop utilisation: a long max block with a busy share near 0 is the OS
// not scheduling the main thread (a loaded machine), not work done on it.
console.log('\n| run | proofs/min | p50 ms | p95 ms | peak RSS MB | max loop block ms | main loop busy | load avg before -> after |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(`| ${r.label} | ${r.perMinute.toFixed(1)} | ${r.p50.toFixed(0)} | ${r.p95.toFixed(0)} | ${r.peakRssMb.toFixed(0)} | ${r.maxBlockMs.toFixed(1)} | ${(r.mainBusy * 100).toFixed(1)}% | ${r.load} |`);
}
console.log('');
const check = (ok: boolean, text: string) => console.log(`${ok ? 'PASS' : 'FAIL'}  ${text}`);
if (native && snarkjsPool) {
  const ratio = native.perMinute / snarkjsPool.perMinute;
  check(ratio >= 3, `native pool (${native.label}) at least 3x the snarkjs pool (size ${cpus}) throughput (${ratio.toFixed(2)}x)`);
}
if (native && bare) console.log(`      native pool / bare fullProve throughput: ${(native.perMinute / bare.perMinute).toFixed(2)}x`);
if (snarkjsPool && bare) console.log(`      snarkjs pool / bare fullProve throughput: ${(snarkjsPool.perMinute / bare.perMinute).toFixed(2)}x`);
if (native) check(native.p50 < 350, `native pool p50 under 350 ms (${native.p50.toFixed(0)} ms)`);
const poolRuns = results.filter((r) => r !== bare);
if (poolRuns.length) {
  const worstBlock = Math.max(...poolRuns.map((r) => r.maxBlockMs));
  check(worstBlock <= 50, `main event loop never blocked more than 50 ms while a pool proves (${worstBlock.toFixed(1)} ms)`);
}
