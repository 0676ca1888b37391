import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { STELLAR_DEVNET_BUILD, STELLAR_WASM_BUILD } from '../devnet/stellar/build.ts';
import { CARGO_CHAINS } from './prebuild-cargo.mjs';

const ROOT = path.join(import.meta.dirname, '..');
const npmScript = (name: string) => {
  const scripts = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  return scripts[name]!.split(' ');
};

describe('the CI head start on the cargo builds (scripts/prebuild-cargo.mjs)', () => {
  it('runs exactly the test setup\'s builds, so the setup finds them fresh instead of building a second time', () => {
    expect(CARGO_CHAINS['native prover']!.map((args) => ['cargo', ...args])).toEqual([npmScript('build:native')]);
    expect(CARGO_CHAINS['soroban wasm']).toEqual([[...STELLAR_WASM_BUILD]]);
    expect(CARGO_CHAINS['pkcs11 signer + stellar devnet']!.map((args) => args.join(' '))).toEqual([
      npmScript('build:signer').slice(1).join(' '),
      STELLAR_DEVNET_BUILD.join(' '),
    ]);
  });

  it('is started by .ci/run before npm ci', () => {
    const lines = readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8').split('\n').map((line) => line.trim());
    const prebuild = lines.indexOf('node scripts/prebuild-cargo.mjs &');
    expect(prebuild).toBeGreaterThan(-1);
    expect(prebuild).toBeLessThan(lines.indexOf('npm ci'));
  });
});
