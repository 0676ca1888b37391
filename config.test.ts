import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, configSchema, loadConfig } from './config.ts';
import { resolveSecrets } from './secrets.ts';

describe('configuration', () => {
  it('has working defaults for the embedded run', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ PORT: 3000, DATABASE_URL: undefined, DATA_DIR: './.data', NODE_ENV: 'development' });
  });

  it('stops on a bad setting with a message naming it and what was received', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: '70000', DATABASE_URL: 'not a url' })).toThrow(/PORT: .*\(received '70000'\)[\s\S]*DATABASE_URL/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
  });

  it('has every setting documented in the README', () => {
    const readme = readFileSync('README.md', 'utf8');
    const undocumented = Object.keys(configSchema.shape).filter((key) => !readme.includes(`\`${key}\``));
    expect(undocumented).toEqual([]);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '' }).PORT).toBe(3000);
  });
});

describe('secrets', () => {
  const dataDir = () => mkdtempSync(path.join(tmpdir(), 'secrets-'));

  it('refuses to start in production without every secret, naming each', () => {
    const config = loadConfig({ NODE_ENV: 'production', DATA_DIR: dataDir() });
    expect(() => resolveSecrets(config)).toThrow(/JWT_SECRET: required in production[\s\S]*SEP10_SIGNING_SECRET[\s\S]*RELAYER_EVM_PRIVATE_KEY[\s\S]*RELAYER_STELLAR_SECRET/);
  });

  it('refuses weak or well-known secrets in production', () => {
    const config = loadConfig({
      NODE_ENV: 'production', DATA_DIR: dataDir(), JWT_SECRET: 'secret',
      SEP10_SIGNING_SECRET: 'SBAD', RELAYER_STELLAR_SECRET: 'x',
      RELAYER_EVM_PRIVATE_KEY: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
    });
    expect(() => resolveSecrets(config)).toThrow(/JWT_SECRET: must be at least 32 bytes[\s\S]*RELAYER_EVM_PRIVATE_KEY: is not a usable private key/);
  });

  it('outside production generates missing secrets once and keeps them across restarts', () => {
    const dir = dataDir();
    const first = resolveSecrets(loadConfig({ DATA_DIR: dir }));
    const second = resolveSecrets(loadConfig({ DATA_DIR: dir }));
    expect(second).toEqual(first);
    expect(first.jwtSecret.length).toBeGreaterThanOrEqual(32);
    expect(first.relayerEvmPrivateKey).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('never writes a secret given in the environment to disk', () => {
    const dir = dataDir();
    const jwt = 'j'.repeat(10) + 'abcdefghijklmnopqrstuvwxyz0123456789';
    resolveSecrets(loadConfig({ DATA_DIR: dir, JWT_SECRET: jwt }));
    expect(readFileSync(path.join(dir, 'secrets.json'), 'utf8')).not.toContain(jwt);
  });
});
