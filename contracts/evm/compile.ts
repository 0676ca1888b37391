import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** ABI and creation/runtime bytecode of one compiled contract. */
export interface CompiledContract {
  /** Contract name as written in the source. */
  name: string;
  /** Source unit (path relative to the base directory) that declares it. */
  source: string;
  abi: unknown[];
  /** 0x-prefixed creation bytecode. */
  bytecode: string;
  /** 0x-prefixed runtime bytecode. */
  deployedBytecode: string;
}

export interface CompileOptions {
  /** Directory source paths and imports resolve against; the repository root by default. */
  baseDir?: string;
  /** Optimizer runs; the optimizer is always on (the Groth16 verifier and the tree need it). */
  optimizerRuns?: number;
  /** EVM version passed to solc; solc's default when unset. */
  evmVersion?: string;
  /** Compile through the IR pipeline (avoids "stack too deep" in large functions). */
  viaIR?: boolean;
  /** Where compiled outputs are cached; `node_modules/.cache/solc` under the base directory by default. */
  cacheDir?: string;
}

/** Raised when solc reports errors; the message carries solc's formatted diagnostics. */
export class SolidityCompileError extends Error {}

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Compiles Solidity files with npm `solc` (standard JSON) and returns every contract by name.
 * `files` are paths relative to `baseDir` (or absolute inside it); imports resolve against
 * `baseDir`, then `baseDir/node_modules`. Outputs are cached by a hash of the exact compiler input
 * and solc version, so a second run skips loading the compiler (a few seconds of wasm start-up).
 * Throws `SolidityCompileError` on compiler errors and when two contracts share a name.
 */
export async function compileSolidity(
  files: string[],
  options: CompileOptions = {},
): Promise<Record<string, CompiledContract>> {
  const baseDir = path.resolve(options.baseDir ?? REPO_ROOT);
  const sources: Record<string, { content: string }> = {};
  const pending = files.map((file) => toSourceUnit(baseDir, file));
  // Gather every imported file up front: the cache key must cover them, and solc then needs no callback.
  while (pending.length > 0) {
    const unit = pending.pop()!;
    if (sources[unit]) continue;
    const content = readFileSync(resolveImport(baseDir, unit), 'utf8');
    sources[unit] = { content };
    for (const imported of importsOf(content)) pending.push(joinImport(unit, imported));
  }
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      optimizer: { enabled: true, runs: options.optimizerRuns ?? 200 },
      ...(options.evmVersion ? { evmVersion: options.evmVersion } : {}),
      ...(options.viaIR ? { viaIR: true } : {}),
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  };
  const solcVersion = solcPackageVersion();
  const key = createHash('sha256').update(solcVersion).update(JSON.stringify(input)).digest('hex');
  const cacheDir = options.cacheDir ?? path.join(baseDir, 'node_modules', '.cache', 'solc');
  const cacheFile = path.join(cacheDir, `${key}.json`);
  if (existsSync(cacheFile)) return JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, CompiledContract>;

  const output = await runSolc(input);
  const contracts = collectContracts(output);
  mkdirSync(cacheDir, { recursive: true });
  // Write then rename: parallel test processes may compile the same input at once.
  const temp = `${cacheFile}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(contracts));
  renameSync(temp, cacheFile);
  return contracts;
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts?: Record<
    string,
    Record<string, { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
  >;
}

async function runSolc(input: object): Promise<SolcOutput> {
  // Loaded lazily: the compiler is a large wasm module and a cache hit never needs it.
  const solc = (await import('solc')).default as { compile(input: string): string };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((entry) => entry.severity === 'error');
  if (errors.length > 0) {
    throw new SolidityCompileError(`solc failed:\n${errors.map((entry) => entry.formattedMessage).join('\n')}`);
  }
  return output;
}

function collectContracts(output: SolcOutput): Record<string, CompiledContract> {
  const result: Record<string, CompiledContract> = {};
  for (const [source, byName] of Object.entries(output.contracts ?? {})) {
    for (const [name, artefact] of Object.entries(byName)) {
      const existing = result[name];
      if (existing) {
        throw new SolidityCompileError(`contract name '${name}' is declared in both ${existing.source} and ${source}`);
      }
      result[name] = {
        name,
        source,
        abi: artefact.abi,
        bytecode: `0x${artefact.evm.bytecode.object}`,
        deployedBytecode: `0x${artefact.evm.deployedBytecode.object}`,
      };
    }
  }
  return result;
}

/** Source unit names use forward slashes relative to the base directory, as solc expects. */
function toSourceUnit(baseDir: string, file: string): string {
  const relative = path.relative(baseDir, path.resolve(baseDir, file));
  if (relative.startsWith('..')) throw new SolidityCompileError(`source '${file}' lies outside ${baseDir}`);
  return relative.split(path.sep).join('/');
}

function resolveImport(baseDir: string, unit: string): string {
  const local = path.join(baseDir, unit);
  if (existsSync(local)) return local;
  const fromModules = path.join(baseDir, 'node_modules', unit);
  if (existsSync(fromModules)) return fromModules;
  throw new SolidityCompileError(`cannot find Solidity source '${unit}' under ${baseDir} or its node_modules`);
}

/** Relative imports ("./x.sol") resolve against the importing unit; others are base-relative. */
function joinImport(fromUnit: string, imported: string): string {
  if (!imported.startsWith('.')) return imported;
  return path.posix.normalize(path.posix.join(path.posix.dirname(fromUnit), imported));
}

const IMPORT_PATTERN = /^\s*import\s+(?:[^'"]*\bfrom\s+)?["']([^"']+)["']/gm;

function importsOf(content: string): string[] {
  return [...content.matchAll(IMPORT_PATTERN)].map((match) => match[1]!);
}

function solcPackageVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('solc/package.json') as { version: string }).version;
}
