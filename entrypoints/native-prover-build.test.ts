import { chmodSync, copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../config/config.ts';
import { ProverClosedError } from '../prover/errors.ts';
import { expectedPublicSignals } from '../prover/proof-input.ts';
import { sampleProofInput } from '../test/support/circuit-vectors.ts';
import { buildNativeProverLater } from './native-prover-build.ts';
import { lazyProverPool } from './parts/proving.ts';

/**
 * The first start's native prover, built while the service serves: snarkjs proves meanwhile, and
 * the pool moves to the native prover when its build finishes. The build here is a double that
 * waits for the test's word and then puts the built binary (the test setup's `npm run
 * build:native`) where cargo would: a cold cargo build takes minutes. The proofs are real.
 */

const builtBinary = inject('nativeProver');
const work = mkdtempSync(path.join(tmpdir(), 'native-later-'));
const config = loadConfig({ DATA_DIR: work, PROVER_POOL_SIZE: '1', PROVER_BACKEND: 'auto' });
const quiet = pino({ level: 'silent' });

/** A logger that keeps what it is told, to read the lines a person would see. */
function recordingLogger() {
  const lines: { level: 'info' | 'warn'; message: string }[] = [];
  return {
    lines,
    info: (_details: object, message: string) => void lines.push({ level: 'info', message }),
    warn: (_details: object, message: string) => void lines.push({ level: 'warn', message }),
  };
}

/** A build that finishes when `finish` is called, writing the binary to `binary` as cargo would. */
function gatedBuild(binary: string) {
  let finish!: () => void;
  let fail!: (error: Error) => void;
  const word = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const build = async ({ signal }: { signal: AbortSignal }) => {
    await Promise.race([word, new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))))]);
    copyFileSync(builtBinary, binary);
    chmodSync(binary, 0o755);
  };
  return { build, finish, fail };
}

/** Waits until `done()` holds, polling; throws naming what it waited for. */
async function until(done: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`gave up waiting for ${what} after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// Fixed secrets: each proof's nullifier tells it apart, and a rerun proves the same statements.
const inputs = [11n, 12n, 13n, 14n, 15n].map((secret) => sampleProofInput({ secret, index: Number(secret % 8n) }).input);

const okProofs = async (registry: Registry) =>
  (await registry.getSingleMetricAsString('relayer_prover_proofs_total')).split('\n').find((line) => line.includes('result="ok"'))?.split(' ')[1];

describe('the native prover built while the service serves', () => {
  const pools: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const pool of pools) await pool.close();
    await (globalThis as { curve_bn128?: { terminate(): Promise<void> } }).curve_bn128?.terminate();
  });

  it('proves with snarkjs while it builds; once built, proofs in flight finish once where they started and new ones are native', async () => {
    const binary = path.join(mkdtempSync(path.join(work, 'target-')), 'relayer-groth16');
    const registry = new Registry();
    const pool = lazyProverPool(config, registry, quiet, { nativeBinary: binary });
    pools.push(pool);
    const logger = recordingLogger();
    const gate = gatedBuild(binary);
    const progress = buildNativeProverLater({ logger, logFile: path.join(work, 'build.log'), takeOver: () => pool.reload(), build: gate.build });
    expect(progress.status()).toMatchObject({ backend: 'snarkjs', state: 'building' });
    expect(logger.lines).toEqual([{ level: 'info', message: expect.stringMatching(/^native prover: building it \(cargo, first start only.*proofs use snarkjs meanwhile/) }]);

    const whileBuilding = await pool.get().prove(inputs[0]!);
    expect(whileBuilding.backend).toBe('snarkjs');
    // Accepted by the snarkjs pool (one thread: one proving, two waiting) just before the build ends.
    const inFlight = inputs.slice(1, 4).map((input) => pool.get().prove(input));
    gate.finish();
    await until(() => progress.status().state === 'ready', 'the native prover to take over');
    expect(progress.status()).toMatchObject({ backend: 'native', state: 'ready' });
    expect(logger.lines.at(-1)).toEqual({ level: 'info', message: expect.stringMatching(/^native prover built in [\d.]+ s: proofs are native from now on/) });

    const afterBuild = await pool.get().prove(inputs[4]!);
    expect(afterBuild.backend).toBe('native');
    expect(afterBuild.publicSignals).toEqual(expectedPublicSignals(inputs[4]!));
    // None lost: each proof accepted before the switch is the old pool's, for its own input.
    const settled = await Promise.all(inFlight);
    expect(settled.map((result) => result.backend)).toEqual(['snarkjs', 'snarkjs', 'snarkjs']);
    expect(settled.map((result) => result.publicSignals)).toEqual(inputs.slice(1, 4).map((input) => expectedPublicSignals(input)));
    // None made twice: five asked, five made.
    expect(await okProofs(registry)).toBe('5');
  }, 300_000);

  it('leaves snarkjs proving when the build fails, saying so; a stop during the build ends it and moves nothing', async () => {
    const binary = path.join(mkdtempSync(path.join(work, 'target-')), 'relayer-groth16');
    const pool = lazyProverPool(config, new Registry(), quiet, { nativeBinary: binary });
    pools.push(pool);
    const logger = recordingLogger();
    const failing = gatedBuild(binary);
    const progress = buildNativeProverLater({ logger, logFile: path.join(work, 'failed.log'), takeOver: () => pool.reload(), build: failing.build });
    failing.fail(new Error('npm run --silent build:native failed (exit 101); see its output in failed.log'));
    await until(() => progress.status().state === 'failed', 'the failed build to show');
    expect(progress.status()).toMatchObject({ backend: 'snarkjs', state: 'failed', detail: expect.stringContaining('exit 101') });
    expect(logger.lines.at(-1)).toEqual({ level: 'warn', message: expect.stringMatching(/build failed: proofs stay on snarkjs\. See .*failed\.log/) });
    expect(await pool.reload()).toBe('snarkjs');

    const stopped = recordingLogger();
    let tookOver = false;
    const gate = gatedBuild(binary);
    const stopping = buildNativeProverLater({ logger: stopped, logFile: path.join(work, 'stopped.log'), takeOver: async () => ((tookOver = true), 'native'), build: gate.build });
    await stopping.stop();
    gate.finish();
    expect(tookOver).toBe(false);
    expect(stopped.lines).toHaveLength(1);
    expect(stopping.status().state).toBe('building');
  });

  it('refuses proofs once the pool is closing, rather than starting a pool nothing stops', async () => {
    const pool = lazyProverPool(config, new Registry(), quiet, { nativeBinary: path.join(work, 'absent') });
    await pool.close();
    expect(() => pool.get()).toThrow(ProverClosedError);
  });
});
