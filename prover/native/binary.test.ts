import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { announceProverBackend } from '../backend.ts';
import { ensureNativeProver, nativeProverStep } from './binary.ts';

/** A logger that keeps what it is told, to read the start-up log a person would see. */
function recordingLogger() {
  const lines: { level: 'info' | 'warn'; details: object; message: string }[] = [];
  return {
    lines,
    info: (details: object, message: string) => void lines.push({ level: 'info', details, message }),
    warn: (details: object, message: string) => void lines.push({ level: 'warn', details, message }),
  };
}

/** A binary path in a scratch target directory: the shared `target/` already holds a built prover. */
const scratchBinary = () => join(mkdtempSync(join(tmpdir(), 'native-target-')), 'relayer-groth16');

describe('the first start and the native prover (npm start)', () => {
  it('builds it when it is missing and cargo is there; uses it when built; snarkjs only without cargo or when asked for', () => {
    const cargo = () => true;
    const noCargo = () => false;
    expect(nativeProverStep('auto', false, cargo)).toBe('build');
    expect(nativeProverStep('native', false, cargo)).toBe('build');
    expect(nativeProverStep('auto', false, noCargo)).toBe('no-cargo');
    expect(nativeProverStep('auto', true, noCargo)).toBe('built');
    expect(nativeProverStep('snarkjs', false, cargo)).toBe('not-wanted');
    // A built binary asks nothing of cargo: later starts spawn no probe.
    expect(nativeProverStep('auto', true, () => expect.fail('cargo probed for a built binary'))).toBe('built');
  });

  it('runs the build on a start that finds no binary, logs it with its time, and the start then proves natively', () => {
    const binary = scratchBinary();
    const logger = recordingLogger();
    let builds = 0;
    // The build writes the binary where cargo would (the real one is `npm run build:native`, which the test setup runs).
    const prepared = ensureNativeProver({ choice: 'auto', binary, logger, cargo: () => true, build: () => { builds++; writeFileSync(binary, ''); } });
    expect(builds).toBe(1);
    expect(prepared).toEqual({ step: 'build', buildSeconds: expect.any(Number) });
    expect(logger.lines.map((line) => line.message)).toEqual([
      expect.stringMatching(/^building the native prover \(cargo.*first start only/),
      expect.stringMatching(/^native prover built in \d+(\.\d)? s \(later starts reuse it\)$/),
    ]);
    expect(announceProverBackend(logger, { binary, notBuiltReason: prepared.unavailable }).backend).toBe('native');
    // The next start finds it: no build, nothing logged.
    const again = recordingLogger();
    expect(ensureNativeProver({ choice: 'auto', binary, logger: again, cargo: () => true, build: () => expect.fail('built twice') })).toEqual({ step: 'built' });
    expect(again.lines).toEqual([]);
  });

  it('says plainly that proofs use snarkjs when cargo is absent, and the backend line says why', () => {
    const binary = scratchBinary();
    const logger = recordingLogger();
    const prepared = ensureNativeProver({ choice: 'auto', binary, logger, cargo: () => false, build: () => expect.fail('no cargo to build with') });
    expect(prepared).toEqual({ step: 'no-cargo', unavailable: 'cargo is not installed' });
    expect(logger.lines).toEqual([{ level: 'warn', details: { binary }, message: expect.stringMatching(/^cargo is not installed, so the native prover cannot be built: proofs use snarkjs.*Install Rust/) }]);
    announceProverBackend(logger, { binary, notBuiltReason: prepared.unavailable });
    expect(logger.lines[1]!.message).toBe('prover backend: snarkjs (PROVER_BACKEND=auto and the native prover is not built (cargo is not installed): proving with snarkjs)');
  });

  it('falls back to snarkjs, saying so, when the build fails under auto; PROVER_BACKEND=native stops on it', () => {
    const failing = () => { throw new Error('npm run build:native failed (exit 101)'); };
    const logger = recordingLogger();
    const prepared = ensureNativeProver({ choice: 'auto', binary: scratchBinary(), logger, cargo: () => true, build: failing });
    expect(prepared).toEqual({ step: 'build', unavailable: 'its build failed: npm run build:native failed (exit 101)' });
    expect(logger.lines.at(-1)).toMatchObject({ level: 'warn', message: expect.stringMatching(/build failed: proofs use snarkjs/) });
    expect(() => ensureNativeProver({ choice: 'native', binary: scratchBinary(), logger, cargo: () => true, build: failing })).toThrow(/exit 101/);
  });

  it('leaves the binary alone under PROVER_BACKEND=snarkjs', () => {
    const logger = recordingLogger();
    expect(ensureNativeProver({ choice: 'snarkjs', binary: scratchBinary(), logger, cargo: () => expect.fail('probed'), build: () => expect.fail('built') })).toEqual({ step: 'not-wanted' });
    expect(logger.lines).toEqual([]);
  });
});
