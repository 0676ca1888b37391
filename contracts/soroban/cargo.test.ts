import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SOROBAN_HOST_TESTS } from '../../devnet/stellar/build.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Runs a command in the repository root; resolves with its exit code and combined output. */
function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, CARGO_TERM_COLOR: 'never' } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // A missing cargo is an error, never a skip: CI has cargo and this suite must run there.
    child.on('error', (error) => reject(new Error(`cannot run ${command}: ${error.message}; install Rust (cargo) to run the Soroban tests`)));
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** Every `.rs` file under `dir` (relative to the repository root). */
function rustFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.rs')).map((file) => join(dir, file));
}

/** The workspace members (the root Cargo.toml's `members`). */
function workspaceMembers(): string[] {
  const manifest = readFileSync(join(ROOT, 'Cargo.toml'), 'utf8');
  const members = /members\s*=\s*\[([^\]]*)\]/.exec(manifest)?.[1] ?? '';
  return [...members.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
}

/** The members whose Rust tests a test file runs: this one (SOROBAN_HOST_TESTS) and prover/native/native.test.ts. */
const MEMBERS_WITH_TESTS = ['contracts/soroban/tests', 'prover/native'];

describe('the Rust workspace (contracts/soroban)', () => {
  it('holds Rust tests only in the crates whose tests a test file runs, so none is built and never run', () => {
    const members = workspaceMembers();
    expect(members).toEqual(expect.arrayContaining(MEMBERS_WITH_TESTS));
    const untested = members.filter((member) => !MEMBERS_WITH_TESTS.includes(member))
      .flatMap((member) => rustFiles(member).filter((file) => /#\[(test|cfg\(test\))\]/.test(readFileSync(join(ROOT, file), 'utf8'))));
    expect(untested, 'Rust tests outside contracts/soroban/tests: move them there or add their crate to SOROBAN_HOST_TESTS').toEqual([]);
  });

  it(
    'passes cargo test: both contracts in the Soroban host against the committed vectors and event fixtures',
    async () => {
      // nice: the cold build takes minutes of both cores; keep the rest of the suite responsive.
      // The build is the ceremony test's too (SOROBAN_HOST_TESTS): whichever file starts first makes it.
      const { code, output } = await run('nice', ['-n', '10', 'cargo', ...SOROBAN_HOST_TESTS]);
      if (code !== 0) console.error(output);
      expect(code, 'cargo test failed (output above)').toBe(0);
      const passed = [...output.matchAll(/test result: ok\. (\d+) passed/g)].reduce((sum, m) => sum + Number(m[1]), 0);
      expect(passed).toBeGreaterThanOrEqual(27);
    },
    30 * 60_000,
  );
});
