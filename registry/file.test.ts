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

describe('registry file providers (rpcUrls, rpcQuorum)', () => {
  const problemsOf = (entry: Record<string, unknown>) => {
    try {
      validateRegistryFile({ chains: [{ ...chain(1), ...entry }] }, new Map());
      return [];
    } catch (caught) {
      return (caught as RegistryFileError).problems;
    }
  };
  const KEYED = 'https://eth.example.net/v3/secret-key-123';

  it('accepts a list of providers with a quorum, and one rpcUrl as before', () => {
    const file = validateRegistryFile({ chains: [{ ...chain(1), rpcUrls: [KEYED, 'https://b.example.org', 'https://c.example.io'], rpcQuorum: 2 }] }, new Map());
    expect(file.chains[0]).toMatchObject({ rpcUrls: [KEYED, 'https://b.example.org', 'https://c.example.io'], rpcQuorum: 2 });
    expect(problemsOf({ rpcUrl: 'http://127.0.0.1:8545' })).toEqual([]);
    expect(problemsOf({ rpcUrls: ['https://a.example.net'] })).toEqual([]);
  });

  it('refuses a quorum above the providers listed, one without providers, a provider twice, both spellings, none listed, and a non-http(s) provider, naming positions, never URLs', () => {
    expect(problemsOf({ rpcUrls: [KEYED, 'https://b.example.org'], rpcQuorum: 3 })).toEqual(['chains.0.rpcQuorum: must be at most the 2 provider(s) listed, received 3']);
    expect(problemsOf({ rpcQuorum: 1 })).toEqual(['chains.0.rpcQuorum: needs rpcUrls (or rpcUrl) to count providers']);
    expect(problemsOf({ rpcUrls: [KEYED, 'https://b.example.org', KEYED] })).toEqual(['chains.0.rpcUrls.2: the same provider as rpcUrls.0']);
    expect(problemsOf({ rpcUrl: KEYED, rpcUrls: ['https://b.example.org'] })).toEqual(['chains.0.rpcUrl: give rpcUrls or rpcUrl, not both']);
    expect(problemsOf({ rpcUrls: [] })).toEqual(['chains.0.rpcUrls: must list at least one provider']);
    expect(problemsOf({ rpcUrls: ['ws://a.example.net/secret-key-123'] })).toEqual(['chains.0.rpcUrls.0: must be an http(s) URL']);
    expect(problemsOf({ rpcUrls: [KEYED], rpcQuorum: 0 })).toEqual(['chains.0.rpcQuorum: must be at least 1']);
    for (const entry of [{ rpcUrls: [KEYED, KEYED] }, { rpcUrls: [KEYED], rpcQuorum: 2 }, { rpcUrls: ['ws://x/secret-key-123'] }]) {
      expect(problemsOf(entry).join('\n')).not.toContain('secret-key-123');
    }
  });
});
