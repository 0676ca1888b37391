import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

/** Circuit source compiled into every artifact under circuits/build/. */
export const CIRCUIT_NAME = 'deposit';
export const CIRCUITS_DIR = new URL('.', import.meta.url).pathname;
export const BUILD_DIR = join(CIRCUITS_DIR, 'build');

/** What `compileCircuit` leaves in its output folder. */
export interface CompiledCircuit {
  r1cs: string;
  wasm: string;
  /** circom's generated witness calculator (CommonJS). */
  witnessCalculator: string;
  /** circom's log: constraint counts, template instances. */
  log: string;
}

/**
 * Compiles circuits/deposit.circom with circom 2 (npm `circom2`, a wasm build run by node; its
 * install script is not needed) with `--O2`, writing r1cs, wasm and witness calculator to `outDir`.
 */
export async function compileCircuit(outDir: string): Promise<CompiledCircuit> {
  const require = createRequire(import.meta.url);
  const cli = require.resolve('circom2/cli.js');
  const root = join(CIRCUITS_DIR, '..');
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    [cli, join(CIRCUITS_DIR, `${CIRCUIT_NAME}.circom`), '--r1cs', '--wasm', '--O2', '-l', join(root, 'node_modules'), '-o', outDir],
    { cwd: root, maxBuffer: 16 * 1024 * 1024 },
  );
  return {
    r1cs: join(outDir, `${CIRCUIT_NAME}.r1cs`),
    wasm: join(outDir, `${CIRCUIT_NAME}_js`, `${CIRCUIT_NAME}.wasm`),
    witnessCalculator: join(outDir, `${CIRCUIT_NAME}_js`, 'witness_calculator.js'),
    log: stdout + stderr,
  };
}

/** snarkjs's Groth16 Solidity template (its package "exports" hides templates/, so resolve from the package root). */
export function verifierTemplatePath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('snarkjs')), '..', 'templates', 'verifier_groth16.sol.ejs');
}

/** The circom compiler version the npm `circom2` package runs, e.g. "2.2.3". */
export async function circomVersion(): Promise<string> {
  const cli = createRequire(import.meta.url).resolve('circom2/cli.js');
  const { stdout } = await promisify(execFile)(process.execPath, [cli, '--version']);
  return /circom compiler (\S+)/.exec(stdout)?.[1] ?? 'unknown';
}
