import { describe, expect, it } from 'vitest';
import { RegistryFileError, validateRegistryFile } from './file.ts';

const chain = (confirmations: number) => ({
  name: 'Devnet A',
  chainId: '31337',
  kind: 'EVM',
  adManagerAddress: '0xCf7Ed3AccA5a467e9e704C703E8D87F634fB0Fc9',
  orderPortalAddress: '0xDc64a140Aa3E981100a9becA4E685f962f0cF6C9',
  confirmations,
});

describe('registry file confirmations', () => {
  it('refuses a confirmation depth of 0, naming the field', () => {
    const error = (() => {
      try {
        validateRegistryFile({ chains: [chain(0)] }, new Map());
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(RegistryFileError);
    expect((error as RegistryFileError).problems).toEqual(['chains.0.confirmations: must be at least 1 (0 would accept a pending transaction)']);
  });

  it('accepts a depth of 1 and more', () => {
    expect(validateRegistryFile({ chains: [chain(1)] }, new Map()).chains[0]!.confirmations).toBe(1);
    expect(validateRegistryFile({ chains: [chain(64)] }, new Map()).chains[0]!.confirmations).toBe(64);
  });

  it('gives every chain of the demo registry a depth of at least 1', async () => {
    const { readFileSync } = await import('node:fs');
    const demo = JSON.parse(readFileSync('devnet/registry.json', 'utf8')) as { chains: { confirmations?: number }[] };
    for (const entry of demo.chains) expect(entry.confirmations).toBeGreaterThanOrEqual(1);
    expect(() => validateRegistryFile(demo, new Map())).not.toThrow();
  });
});
