import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as snarkjs from 'snarkjs';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { artifacts } from '../circuits/artifacts.ts';
import { sampleProofInput } from '../test/support/circuit-vectors.ts';
import { InvalidProofInputError, ProverBusyError, ProverClosedError } from './errors.ts';
import type { ProverBackend } from './backend.ts';
import { ProverPool, type ProverPoolOptions } from './pool.ts';
import { expectedPublicSignals } from './proof-input.ts';

const nativeBinary = inject('nativeProver');

const metricValue = async (registry: Registry, name: string, labels: Record<string, string> = {}) => {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const match = metric?.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return match?.value ?? 0;
};

describe('ProverPool (snarkjs backend)', () => poolBehaviour('snarkjs'));
describe('ProverPool (native backend)', () => poolBehaviour('native'));

/** The pool's contract, the same whatever proves behind it. */
function poolBehaviour(backend: ProverBackend) {
  const registry = new Registry();
  let pool: ProverPool;
  const newPool = (options: ProverPoolOptions) => new ProverPool({ ...options, backend, nativeBinary: nativeBinary ?? undefined });

  beforeAll(async () => {
    pool = newPool({ size: 1, maxQueue: 1, registry });
    await pool.ready();
  });
  afterAll(async () => {
    await pool?.close({ drain: false });
    await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
  });

  it(`proves with the ${backend} backend it was asked for`, () => {
    expect(pool.backend).toBe(backend);
    expect(pool.backendReason).toBe(`PROVER_BACKEND=${backend}`);
  });

  it('returns a proof that verifies, with the input public signals, and counts it', async () => {
    const { input } = sampleProofInput();
    const { proof, publicSignals, timings } = await pool.prove(input);
    expect(publicSignals).toEqual(expectedPublicSignals(input));
    const vkey = JSON.parse(readFileSync(artifacts.verificationKey, 'utf8')) as object;
    expect(await snarkjs.groth16.verify(vkey, publicSignals, proof)).toBe(true);
    expect(timings.proveMs).toBeGreaterThan(0);
    expect(await metricValue(registry, 'relayer_prover_proofs_total', { result: 'ok' })).toBe(1);
    expect(await metricValue(registry, 'relayer_prover_prove_duration_seconds', { le: '+Inf' })).toBe(1);
  });

  it('rejects an input the circuit does not accept with InvalidProofInputError', async () => {
    const { input } = sampleProofInput();
    input.pathElements[0] = '12345';
    await expect(pool.prove(input)).rejects.toThrow(InvalidProofInputError);
    expect(await metricValue(registry, 'relayer_prover_proofs_total', { result: 'invalid_input' })).toBe(1);
  });

  it('refuses work beyond the queue bound with ProverBusyError, and finishes what it accepted', async () => {
    // One worker, a queue of one: the first runs, the second waits, the third is refused.
    const results = await Promise.allSettled([1, 2, 3].map(() => pool.prove(sampleProofInput().input)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(ProverBusyError);
    expect(await metricValue(registry, 'relayer_prover_proofs_total', { result: 'busy' })).toBe(1);
    expect(pool.queueDepth).toBe(0);
    expect(pool.busyWorkers).toBe(0);
  });

  it('reports queue depth and busy workers while proving', async () => {
    const running = [pool.prove(sampleProofInput().input), pool.prove(sampleProofInput().input)];
    expect(pool.busyWorkers).toBe(1);
    expect(await metricValue(registry, 'relayer_prover_queue_depth')).toBe(1);
    await Promise.all(running);
    expect(await metricValue(registry, 'relayer_prover_queue_depth')).toBe(0);
  });

  it('drains accepted proofs on close, then refuses new ones with ProverClosedError', async () => {
    const draining = newPool({ size: 1, registry: new Registry() });
    const accepted = [draining.prove(sampleProofInput().input), draining.prove(sampleProofInput().input)];
    await draining.close();
    await expect(Promise.all(accepted)).resolves.toHaveLength(2);
    await expect(draining.prove(sampleProofInput().input)).rejects.toThrow(ProverClosedError);
  });

  it('rejects queued and running proofs with ProverClosedError when closed without draining', async () => {
    const closing = newPool({ size: 1, registry: new Registry() });
    const pending = [closing.prove(sampleProofInput().input), closing.prove(sampleProofInput().input)];
    const settled = Promise.allSettled(pending);
    await closing.close({ drain: false });
    for (const result of await settled) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(ProverClosedError);
    }
  });

  it('lets the process exit on its own after close', () => {
    // A separate process: the test passes only if nothing (threads, curves) keeps it alive.
    const root = new URL('..', import.meta.url);
    const script = join(mkdtempSync(join(tmpdir(), 'prover-exit-')), 'exit.mts');
    writeFileSync(script, `
      import { ProverPool } from '${new URL('prover/pool.ts', root).href}';
      import { sampleProofInput } from '${new URL('test/support/circuit-vectors.ts', root).href}';
      const pool = new ProverPool({ size: 1, backend: '${backend}' });
      await pool.prove(sampleProofInput().input);
      await pool.close();
      console.log('closed');`);
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: root.pathname, timeout: 45_000, encoding: 'utf8' });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('closed');
    expect(child.status).toBe(0);
  });
}
