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

describe('registry file publicRpcUrl', () => {
  const stellar = (publicRpcUrl?: string) => ({
    name: 'Stellar', chainId: '148', kind: 'STELLAR', networkPassphrase: 'Standalone Network ; February 2017',
    adManagerAddress: 'CAAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQC526',
    orderPortalAddress: 'CABAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAEAQCAIBAFNSZ',
    ...(publicRpcUrl === undefined ? {} : { publicRpcUrl }),
  });
  const problems = (input: unknown) => {
    try {
      validateRegistryFile(input, new Map());
      return [];
    } catch (caught) {
      return (caught as RegistryFileError).problems;
    }
  };

  it('takes an http(s) URL on a Stellar chain, and none at all', () => {
    expect(validateRegistryFile({ chains: [stellar('https://soroban-testnet.stellar.org')] }, new Map()).chains[0]!.publicRpcUrl).toBe('https://soroban-testnet.stellar.org');
    expect(validateRegistryFile({ chains: [stellar()] }, new Map()).chains[0]!.publicRpcUrl).toBeUndefined();
  });

  it('refuses one on an EVM chain, and a URL of another scheme, naming the field', () => {
    expect(problems({ chains: [{ ...chain(1), publicRpcUrl: 'https://rpc.example.org' }] })).toEqual(['chains.0.publicRpcUrl: only a STELLAR chain publishes one']);
    expect(problems({ chains: [stellar('ftp://rpc.example.org')] })).toEqual([expect.stringMatching(/^chains\.0\.publicRpcUrl: /)]);
  });
});
