import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { describe, expect, inject, it } from 'vitest';
import { createSoftHsmToken } from '../test/support/softhsm.ts';
import { loadConfig } from '../config/config.ts';
import { resolveSecrets } from '../config/secrets.ts';
import { keeperSignerFromConfig, resolveKeeperKeys } from './keys.ts';

const temporal = { DATABASE_URL: 'postgres://db.internal/relayer', TEMPORAL_ADDRESS: 'temporal.internal:7233' };
const production = (settings: Record<string, string> = {}) => ({
  NODE_ENV: 'production', DATA_DIR: mkdtempSync(path.join(tmpdir(), 'keeper-keys-')), ...temporal, ...settings,
});

describe('keeper accounts', () => {
  it('in production the worker refuses to start without keeper keys, naming them, unless KEEPER_ENABLED=false', () => {
    expect(() => loadConfig(production(), 'worker')).toThrow(/KEEPER_EVM_PRIVATE_KEY: is required in production[\s\S]*KEEPER_STELLAR_SECRET: is required/);
    const off = loadConfig(production({ KEEPER_ENABLED: 'false' }), 'worker');
    expect(resolveKeeperKeys(off, 'worker')).toBeUndefined();
    expect(keeperSignerFromConfig(off, 'worker')).toBeUndefined();
  });

  it('the api neither needs nor may hold keeper keys in production', () => {
    const key = Wallet.createRandom().privateKey;
    const env = production({
      KEEPER_EVM_PRIVATE_KEY: key, KEEPER_ENABLED: 'false', RELAYER_SIGNER_ALLOW_ENV: 'true',
      SIWE_DOMAIN: 'app.example.com', SIWE_URI: 'https://app.example.com', SEP10_HOME_DOMAIN: 'example.com', SEP10_WEB_AUTH_DOMAIN: 'auth.example.com',
    });
    expect(() => resolveSecrets(loadConfig(env, 'api'), 'api')).toThrow(/KEEPER_EVM_PRIVATE_KEY: the api process does not use it/);
    expect(keeperSignerFromConfig(loadConfig(env, 'api'), 'api')).toBeUndefined();
  });

  it('an api that runs the embedded orchestrator itself (no Temporal) is the process that sends: it needs the keeper\'s keys and may hold them', () => {
    const site = {
      RELAYER_SIGNER_ALLOW_ENV: 'true', DATABASE_URL: 'postgres://db.internal/relayer',
      SIWE_DOMAIN: 'app.example.com', SIWE_URI: 'https://app.example.com', SEP10_HOME_DOMAIN: 'example.com', SEP10_WEB_AUTH_DOMAIN: 'auth.example.com',
    };
    const embeddedApi = (settings: Record<string, string>) => ({ NODE_ENV: 'production', DATA_DIR: mkdtempSync(path.join(tmpdir(), 'keeper-keys-')), ...site, ...settings });
    expect(() => keeperSignerFromConfig(loadConfig(embeddedApi({}), 'api'), 'api')).toThrow(/KEEPER_EVM_PRIVATE_KEY: is required in production/);
    const keys = { KEEPER_EVM_PRIVATE_KEY: Wallet.createRandom().privateKey, KEEPER_STELLAR_SECRET: Keypair.random().secret() };
    const config = loadConfig(embeddedApi(keys), 'api');
    expect(() => resolveSecrets(config, 'api')).not.toThrow(/KEEPER_/);
    expect(keeperSignerFromConfig(config, 'api')).toBeDefined();
  });

  it('signs with the configured keys, which may be neither public development keys nor the relayer\'s own', async () => {
    const evm = Wallet.createRandom();
    const stellar = Keypair.random();
    const config = loadConfig(production({ KEEPER_EVM_PRIVATE_KEY: evm.privateKey, KEEPER_STELLAR_SECRET: stellar.secret() }), 'worker');
    const signer = keeperSignerFromConfig(config, 'worker')!;
    expect(await signer.evmAddress()).toBe(evm.address);
    expect(await signer.stellarPublicKey()).toBe(stellar.publicKey());
    const anvil0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
    expect(() => resolveKeeperKeys(loadConfig(production({ KEEPER_EVM_PRIVATE_KEY: anvil0, KEEPER_STELLAR_SECRET: stellar.secret() }), 'worker'), 'worker'))
      .toThrow(/KEEPER_EVM_PRIVATE_KEY: is one of the public development keys/);
    const same = production({ KEEPER_EVM_PRIVATE_KEY: evm.privateKey, RELAYER_EVM_PRIVATE_KEY: evm.privateKey, KEEPER_STELLAR_SECRET: stellar.secret() });
    expect(() => resolveKeeperKeys(loadConfig(same, 'worker'), 'worker')).toThrow(/must not be the relayer's request-signing key/);
  });

  it('outside production generates the keys once and keeps them, readable by the owner only', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'keeper-dev-'));
    const first = resolveKeeperKeys(loadConfig({ DATA_DIR: dir }), 'embedded')!;
    expect(resolveKeeperKeys(loadConfig({ DATA_DIR: dir }), 'worker')).toEqual(first);
    expect(statSync(path.join(dir, 'keeper-keys.json')).mode & 0o777).toBe(0o600);
  });

  it('KEEPER_SIGNER=pkcs11 names the labels it needs', () => {
    expect(() => loadConfig(production({ KEEPER_SIGNER: 'pkcs11' }), 'worker'))
      .toThrow(/PKCS11_KEEPER_EVM_KEY_LABEL: must be set when KEEPER_SIGNER=pkcs11[\s\S]*PKCS11_KEEPER_STELLAR_KEY_LABEL/);
  });
  it('KEEPER_SIGNER=pkcs11 in a production worker: the keeper\'s own token and PIN, never the api\'s PIN', async () => {
    const token = createSoftHsmToken(inject('softhsmModule'), 'keeper');
    try {
      const keeperToken = {
        KEEPER_SIGNER: 'pkcs11', PKCS11_MODULE: token.env.PKCS11_MODULE!, PKCS11_KEEPER_TOKEN_LABEL: 'keeper',
        PKCS11_KEEPER_EVM_KEY_LABEL: token.env.PKCS11_EVM_KEY_LABEL!, PKCS11_KEEPER_STELLAR_KEY_LABEL: token.env.PKCS11_STELLAR_KEY_LABEL!,
      };
      // Without its own PIN the worker does not start: the relayer's PIN is not its to hold.
      expect(() => loadConfig(production(keeperToken), 'worker')).toThrow(/PKCS11_KEEPER_PIN: must be set \(or PKCS11_KEEPER_PIN_FILE\) in production/);
      const withApiPin = loadConfig(production({ ...keeperToken, PKCS11_KEEPER_PIN_FILE: token.env.PKCS11_PIN_FILE!, PKCS11_PIN_FILE: token.env.PKCS11_PIN_FILE! }), 'worker');
      expect(() => resolveSecrets(withApiPin, 'worker')).toThrow(/PKCS11_PIN_FILE: the worker process does not use it/);
      const config = loadConfig(production({ ...keeperToken, PKCS11_KEEPER_PIN_FILE: token.env.PKCS11_PIN_FILE! }), 'worker');
      expect(() => resolveSecrets(config, 'worker')).not.toThrow();
      const signer = keeperSignerFromConfig(config, 'worker')!;
      try {
        expect(await signer.evmAddress()).toBe(token.evmAddress);
        expect(signer.backend).toBe('pkcs11');
      } finally {
        await signer.close();
      }
      // The api may not hold the keeper's PIN either.
      const api = production({
        ...keeperToken, PKCS11_KEEPER_PIN_FILE: token.env.PKCS11_PIN_FILE!, KEEPER_ENABLED: 'false', RELAYER_SIGNER_ALLOW_ENV: 'true',
        SIWE_DOMAIN: 'app.example.com', SIWE_URI: 'https://app.example.com', SEP10_HOME_DOMAIN: 'example.com', SEP10_WEB_AUTH_DOMAIN: 'auth.example.com',
      });
      expect(() => resolveSecrets(loadConfig(api, 'api'), 'api')).toThrow(/PKCS11_KEEPER_PIN_FILE: the api process does not use it/);
    } finally {
      token.remove();
    }
  });
});
