import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { HDNodeWallet, Wallet } from 'ethers';
import { describe, expect, it } from 'vitest';
import { DEVNET_CHAINS } from '../devnet/index.ts';
import { ConfigError, configSchema, loadConfig, siweSettingsOf } from './config.ts';
import { CONCERNS, ROLE_CONCERNS } from './roles.ts';
import { resolveSecrets, SECRETS_OF_ROLE, WELL_KNOWN_DEV_KEYS, type ProcessRole } from './secrets.ts';

/** Public sign-in domains, which production requires. */
const PUBLIC_DOMAINS = {
  SIWE_DOMAIN: 'app.example.com', SIWE_URI: 'https://app.example.com', SEP10_HOME_DOMAIN: 'example.com', SEP10_WEB_AUTH_DOMAIN: 'auth.example.com',
};

/** A production environment that starts: every secret set, random and distinct, public domains. */
function productionEnv(): Record<string, string> {
  return {
    NODE_ENV: 'production',
    RELAYER_SIGNER_ALLOW_ENV: 'true',
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'secrets-prod-')),
    JWT_SECRET: randomBytes(32).toString('hex'),
    SEP10_SIGNING_SECRET: Keypair.random().secret(),
    RELAYER_STELLAR_SECRET: Keypair.random().secret(),
    RELAYER_EVM_PRIVATE_KEY: Wallet.createRandom().privateKey,
    // The keeper's keys are the worker's; their rules have their own tests (keeper/keys.test.ts).
    KEEPER_ENABLED: 'false',
    ...PUBLIC_DOMAINS,
  };
}

/** The ten accounts anvil funds by default, derived from its public mnemonic. */
const ANVIL_KEYS = Array.from({ length: 10 }, (_, i) =>
  HDNodeWallet.fromPhrase('test test test test test test test test test test test junk', undefined, `m/44'/60'/0'/0/${i}`).privateKey);

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

  it('has every setting documented in docs/configuration.md', () => {
    const readme = readFileSync('docs/configuration.md', 'utf8');
    const undocumented = Object.keys(configSchema.shape).filter((key) => !readme.includes(`\`${key}\``));
    expect(undocumented).toEqual([]);
  });

  it('serves /metrics on one port only: METRICS_ON_API_PORT with METRICS_PORT is refused, a bad value named', () => {
    expect(loadConfig({}).METRICS_ON_API_PORT).toBe(false);
    expect(loadConfig({ METRICS_ON_API_PORT: 'true' }).METRICS_ON_API_PORT).toBe(true);
    expect(() => loadConfig({ METRICS_ON_API_PORT: 'true', METRICS_PORT: '9464' })).toThrow(/METRICS_ON_API_PORT: must not be true when METRICS_PORT is set/);
    expect(() => loadConfig({ METRICS_ON_API_PORT: 'yes' })).toThrow(/METRICS_ON_API_PORT: must be true or false \(received 'yes'\)/);
  });

  it('places lockExpiry ORDER_LOCK_EXPIRY_SECONDS after creation, and refuses one that leaves no time to lock a deposit made at its deadline', () => {
    expect(loadConfig({}).ORDER_LOCK_EXPIRY_SECONDS).toBe(21_600);
    expect(loadConfig({ TRADE_RESERVATION_TTL_SECONDS: '20', ORDER_LOCK_EXPIRY_SECONDS: '3660' }).ORDER_LOCK_EXPIRY_SECONDS).toBe(3_660);
    expect(() => loadConfig({ ORDER_LOCK_EXPIRY_SECONDS: '3700' })).toThrow(/ORDER_LOCK_EXPIRY_SECONDS: must exceed the deposit request's TTL \(600 s\) plus 3600 s/);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '' }).PORT).toBe(3000);
  });
});

describe('configuration per process', () => {
  /** A production environment of only `settings`: nothing of any other process. */
  // Without a keeper: its keys' rules have their own tests (keeper/keys.test.ts).
  const production = (settings: Record<string, string> = {}) => ({
    NODE_ENV: 'production', KEEPER_ENABLED: 'false', DATA_DIR: mkdtempSync(path.join(tmpdir(), 'roles-')), ...settings,
  });
  const temporal = { DATABASE_URL: 'postgres://db.internal/relayer', TEMPORAL_ADDRESS: 'temporal.internal:7233' };

  it('puts every setting in exactly one concern; the embedded run uses them all', () => {
    const keys = CONCERNS.flatMap((concern) => Object.keys(concern.schema.shape));
    expect(keys.length).toBe(new Set(keys).size);
    expect(new Set(keys)).toEqual(new Set(Object.keys(configSchema.shape)));
    expect(ROLE_CONCERNS.embedded).toEqual(CONCERNS);
  });

  it('migrate starts in production with DATABASE_URL alone, and holds no secret', () => {
    const config = loadConfig(production({ DATABASE_URL: 'postgres://db.internal/relayer' }), 'migrate');
    expect(config.DATABASE_URL).toBe('postgres://db.internal/relayer');
    expect(resolveSecrets(config, 'migrate')).toEqual({});
  });

  it('the prover and the worker start in production with no signer, JWT, SEP-10 or SIWE setting', () => {
    for (const role of ['prover', 'worker'] as const) {
      const config = loadConfig(production(temporal), role);
      expect(config.RELAYER_SIGNER, role).toBe('env');
      expect(resolveSecrets(config, role), role).toEqual({});
    }
    // Their own rules still hold: mTLS to Temporal needs both files.
    expect(() => loadConfig(production({ ...temporal, TEMPORAL_TLS_CERT: '/tls/client.pem' }), 'worker')).toThrow(/TEMPORAL_TLS_KEY: is required/);
    // The worker's webhook and job settings are its own too: a malformed value stops it, naming it.
    expect(() => loadConfig(production({ ...temporal, RETENTION_CRON: 'daily' }), 'worker')).toThrow(/RETENTION_CRON: must be a 5-field cron expression/);
  });

  it('the api (and the embedded run) in production still refuse without their own: the signer and the public sign-in domains', () => {
    for (const role of ['api', 'embedded'] as const) {
      let message = '';
      try {
        loadConfig(production(temporal), role);
      } catch (error) {
        message = (error as Error).message;
      }
      for (const key of ['RELAYER_SIGNER: is env', 'SIWE_DOMAIN: must be set', 'SIWE_URI: must be set', 'SEP10_HOME_DOMAIN: must be set', 'SEP10_WEB_AUTH_DOMAIN: must be set']) {
        expect(message, role).toContain(key);
      }
    }
    // With them, its secrets are required (none generated in production).
    const config = loadConfig(production({ ...temporal, RELAYER_SIGNER_ALLOW_ENV: 'true', ...PUBLIC_DOMAINS }), 'api');
    expect(() => resolveSecrets(config, 'api')).toThrow(/JWT_SECRET: required in production/);
  });

  it('a malformed value of any setting stops any process, naming it; the rules of a concern bind only the processes that use it', () => {
    expect(() => loadConfig(production({ DATABASE_URL: 'postgres://db/x', SSE_MAX_STREAMS: 'many' }), 'migrate')).toThrow(/SSE_MAX_STREAMS: /);
    expect(() => loadConfig(production({ DATABASE_URL: 'postgres://db/x', CORS_ORIGINS: '*' }), 'migrate')).not.toThrow();
    expect(() => loadConfig(production({ ...temporal, CORS_ORIGINS: '*', RELAYER_SIGNER_ALLOW_ENV: 'true', ...PUBLIC_DOMAINS }), 'api')).toThrow(/CORS_ORIGINS: must list/);
  });
});

describe('secrets', () => {
  const dataDir = () => mkdtempSync(path.join(tmpdir(), 'secrets-'));

  it('refuses to start in production without every secret, naming each', () => {
    const config = loadConfig({ NODE_ENV: 'production', RELAYER_SIGNER_ALLOW_ENV: 'true', KEEPER_ENABLED: 'false', DATA_DIR: dataDir(), ...PUBLIC_DOMAINS });
    expect(() => resolveSecrets(config)).toThrow(/JWT_SECRET: required in production[\s\S]*SEP10_SIGNING_SECRET[\s\S]*RELAYER_EVM_PRIVATE_KEY[\s\S]*RELAYER_STELLAR_SECRET/);
  });

  it('refuses weak or well-known secrets in production', () => {
    const config = loadConfig({
      NODE_ENV: 'production', RELAYER_SIGNER_ALLOW_ENV: 'true', KEEPER_ENABLED: 'false', DATA_DIR: dataDir(), JWT_SECRET: 'secret', ...PUBLIC_DOMAINS,
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
    expect(first.jwtSecret!.length).toBeGreaterThanOrEqual(32);
    expect(first.relayerEvmPrivateKey).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('never writes a secret given in the environment to disk', () => {
    const dir = dataDir();
    const jwt = 'j'.repeat(10) + 'abcdefghijklmnopqrstuvwxyz0123456789';
    resolveSecrets(loadConfig({ DATA_DIR: dir, JWT_SECRET: jwt }));
    expect(readFileSync(path.join(dir, 'secrets.json'), 'utf8')).not.toContain(jwt);
  });
});

describe('secrets per process role', () => {
  const dataDir = () => mkdtempSync(path.join(tmpdir(), 'secrets-role-'));
  const base = () => ({ NODE_ENV: 'production', RELAYER_SIGNER_ALLOW_ENV: 'true', KEEPER_ENABLED: 'false', DATA_DIR: dataDir(), ...PUBLIC_DOMAINS });
  const keyed = { jwtSecret: 'JWT_SECRET', sep10SigningSecret: 'SEP10_SIGNING_SECRET', relayerEvmPrivateKey: 'RELAYER_EVM_PRIVATE_KEY', relayerStellarSecret: 'RELAYER_STELLAR_SECRET' } as const;

  it('the worker, prover and migrate hold no signing, SEP-10 or JWT key nor the PKCS#11 PIN; the api all of them', () => {
    expect(SECRETS_OF_ROLE.worker).toEqual([]);
    expect(SECRETS_OF_ROLE.prover).toEqual([]);
    expect(SECRETS_OF_ROLE.migrate).toEqual([]);
    const rotation = ['jwtPreviousSecret', 'relayerEvmPreviousPrivateKey', 'relayerStellarPreviousSecret'];
    expect([...SECRETS_OF_ROLE.api].sort()).toEqual([...Object.keys(keyed), ...rotation, 'pkcs11Pin'].sort());
  });

  it('in production each role starts with only its own secrets', () => {
    for (const role of ['worker', 'prover', 'migrate'] as ProcessRole[]) {
      expect(resolveSecrets(loadConfig(base()), role), role).toEqual({});
    }
    const { NODE_ENV: _n, RELAYER_SIGNER_ALLOW_ENV: _a, DATA_DIR: _d, ...apiSecrets } = productionEnv();
    const api = resolveSecrets(loadConfig({ ...base(), ...apiSecrets }), 'api');
    expect(Object.keys(api).sort()).toEqual(Object.keys(keyed).sort());
  });

  it('in production a process given a secret its role does not use refuses to start naming it', () => {
    const all = productionEnv();
    for (const role of ['worker', 'prover', 'migrate'] as ProcessRole[]) {
      for (const envName of Object.values(keyed)) {
        expect(() => resolveSecrets(loadConfig({ ...base(), [envName]: all[envName]! }), role), `${role} ${envName}`)
          .toThrow(new RegExp(`${envName}: the ${role} process does not use it and must not hold it in production`));
      }
    }
  });

  it('outside production a worker ignores a secret it does not use and generates none', () => {
    const dir = dataDir();
    const secrets = resolveSecrets(loadConfig({ DATA_DIR: dir, JWT_SECRET: randomBytes(32).toString('hex') }), 'worker');
    expect(secrets).toEqual({});
  });
});

describe('production configuration refuses', () => {
  const refusal = (env: Record<string, string>) => {
    try {
      resolveSecrets(loadConfig(env));
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    return null;
  };

  it('starts with random, distinct secrets and public domains', () => {
    expect(refusal(productionEnv())).toBeNull();
  });

  it("refuses every one of anvil's ten default accounts' keys as the relayer key", () => {
    expect([...WELL_KNOWN_DEV_KEYS].sort()).toEqual([...ANVIL_KEYS].sort());
    for (const key of ANVIL_KEYS) {
      expect(refusal({ ...productionEnv(), RELAYER_EVM_PRIVATE_KEY: key }), key).toMatch(/^ {2}RELAYER_EVM_PRIVATE_KEY: is not a usable private key$/m);
      expect(refusal({ ...productionEnv(), RELAYER_EVM_PRIVATE_KEY: key.toUpperCase().replace('0X', '0x') }), key).toMatch(/RELAYER_EVM_PRIVATE_KEY/);
    }
  });

  it("refuses a SEP-10 signing key that is also the relayer's Stellar key", () => {
    const env = productionEnv();
    expect(refusal({ ...env, SEP10_SIGNING_SECRET: env.RELAYER_STELLAR_SECRET! }))
      .toMatch(/SEP10_SIGNING_SECRET: must not be the same key as RELAYER_STELLAR_SECRET/);
  });

  it.each([
    ['SIWE_DOMAIN', 'localhost:3000'], ['SIWE_DOMAIN', '127.0.0.1'], ['SIWE_DOMAIN', 'app.localhost'], ['SIWE_DOMAIN', '[::1]:3000'],
    ['SIWE_URI', 'http://localhost:3000'], ['SIWE_URI', 'https://127.0.0.1/login'], ['SIWE_URI', 'http://[::1]'],
    ['SEP10_HOME_DOMAIN', 'localhost'], ['SEP10_HOME_DOMAIN', '127.0.0.53'],
    ['SEP10_WEB_AUTH_DOMAIN', 'localhost'], ['SEP10_WEB_AUTH_DOMAIN', 'LOCALHOST:8000'], ['SEP10_WEB_AUTH_DOMAIN', '0.0.0.0'],
  ])('refuses %s=%s', (key, value) => {
    expect(refusal({ ...productionEnv(), [key]: value })).toMatch(new RegExp(`^ {2}${key}: must name the public domain in production.*\\(received '${value.replace(/[.[\]]/g, '\\$&')}'\\)$`, 'm'));
  });

  it('leaves loopback domains alone outside production (the embedded run)', () => {
    expect(loadConfig({ SIWE_DOMAIN: 'localhost:3000' }).SIWE_DOMAIN).toBe('localhost:3000');
  });

  it.each(['SIWE_DOMAIN', 'SIWE_URI'])('refuses to start in production without %s', (key) => {
    const env: Record<string, string | undefined> = productionEnv();
    delete env[key];
    expect(refusal(env as Record<string, string>)).toMatch(new RegExp(`^ {2}${key}: must be set in production`, 'm'));
  });

  it('outside production, SIWE names the bound API port and the devnet chain unless configured', () => {
    expect(siweSettingsOf(loadConfig({ PORT: '0' }), 40123)).toEqual({ domain: 'localhost:40123', uri: 'http://localhost:40123', chainId: DEVNET_CHAINS[0].chainId });
    expect(siweSettingsOf(loadConfig({ PORT: '8080' }), 8080)).toEqual({ domain: 'localhost:8080', uri: 'http://localhost:8080', chainId: 31337 });
    expect(siweSettingsOf(loadConfig({ SIWE_DOMAIN: 'a.test', SIWE_URI: 'https://a.test', SIWE_CHAIN_ID: '5' }), 1)).toEqual({ domain: 'a.test', uri: 'https://a.test', chainId: 5 });
    expect(siweSettingsOf(loadConfig({ ...productionEnv() }), 443).chainId).toBe(1);
  });

  it.each([
    ['too little entropy (31 random bytes, hex)', randomBytes(31).toString('hex'), /at most 248 bits/],
    ['too little entropy (38 characters of all classes)', 'Tr0ub4dor&3-correct-Horse-battery-St4p', /at most 249 bits/],
    ['one character repeated', 'a'.repeat(70), /at least 32 bytes|repetitive|single character class/],
    ['a short cycle', 'Xy9!'.repeat(20), /repetitive|cycle/],
    ['a cycle with a tail', `${'Qx7#Lm2$Vb'.repeat(6)}a1b2c3d4`, /repeats short cycles/],
    ['one character class (lowercase)', 'qwhvmzkeltcbyrpsndgaofxiuj'.repeat(3), /single character class|cycle/],
    ['one character class (digits)', '8'.concat('31415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679'), /single character class/],
    ['mostly one character', `${'z'.repeat(30)}${randomBytes(24).toString('base64url')}`, /quarter of its length/],
    ['a run of consecutive characters', `abcdefghijklmnopqrstuvwxyz${randomBytes(24).toString('base64url')}`, /consecutive/],
  ])('refuses a JWT secret of %s', (_what, secret, why) => {
    const message = refusal({ ...productionEnv(), JWT_SECRET: secret });
    expect(message).toMatch(/JWT_SECRET: /);
    expect(message).toMatch(why);
  });

  it('accepts JWT secrets of 256 random bits or more however encoded', () => {
    for (const secret of [randomBytes(32).toString('hex'), randomBytes(32).toString('base64'), randomBytes(33).toString('base64url'), randomBytes(48).toString('base64url')]) {
      expect(refusal({ ...productionEnv(), JWT_SECRET: secret }), secret).toBeNull();
    }
  });

  it('exits the process with 78 naming the variable', () => {
    const run = (env: Record<string, string>) => spawnSync(process.execPath, ['--import', 'tsx', 'entrypoints/api-main.ts'], {
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', DATABASE_URL: 'postgres://127.0.0.1:1/never', ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
    const localhost = run({ ...productionEnv(), SIWE_DOMAIN: 'localhost:3000' });
    expect(localhost.status).toBe(78);
    expect(localhost.stderr).toMatch(/SIWE_DOMAIN: must name the public domain/);
    const anvil = run({ ...productionEnv(), RELAYER_EVM_PRIVATE_KEY: ANVIL_KEYS[7]! });
    expect(anvil.status).toBe(78);
    expect(anvil.stderr).toMatch(/RELAYER_EVM_PRIVATE_KEY: is not a usable private key/);
    const anyOrigin = run({ ...productionEnv(), CORS_ORIGINS: '*' });
    expect(anyOrigin.status).toBe(78);
    expect(anyOrigin.stderr).toMatch(/CORS_ORIGINS: must list the allowed origins in production, not \*/);
    const { RELAYER_SIGNER_ALLOW_ENV: _allowed, ...rawKeys } = productionEnv();
    const envSigner = run(rawKeys);
    expect(envSigner.status).toBe(78);
    expect(envSigner.stderr).toMatch(/RELAYER_SIGNER: is env \(raw keys in the environment\): production wants RELAYER_SIGNER=pkcs11/);
  }, 300_000); // four node processes, each loading the service through tsx: about 20 s apiece on a loaded machine
});

describe('the relayer signer setting (RELAYER_SIGNER)', () => {
  const pkcs11 = { RELAYER_SIGNER: 'pkcs11', PKCS11_MODULE: '/usr/lib/softhsm/libsofthsm2.so', PKCS11_TOKEN_LABEL: 'relayer', PKCS11_PIN: '1234', PKCS11_EVM_KEY_LABEL: 'evm', PKCS11_STELLAR_KEY_LABEL: 'stellar' };

  it('is env by default outside production; production refuses env unless RELAYER_SIGNER_ALLOW_ENV=true', () => {
    expect(loadConfig({}).RELAYER_SIGNER).toBe('env');
    const { RELAYER_SIGNER_ALLOW_ENV: _allowed, ...rawKeys } = productionEnv();
    expect(() => loadConfig(rawKeys)).toThrow(/RELAYER_SIGNER: is env/);
    expect(loadConfig({ ...rawKeys, RELAYER_SIGNER_ALLOW_ENV: 'true' }).RELAYER_SIGNER).toBe('env');
  });

  it('with pkcs11 names every missing PKCS11_* setting, wants one PIN source, and asks no raw relayer key in production', () => {
    expect(() => loadConfig({ RELAYER_SIGNER: 'pkcs11' }))
      .toThrow(/PKCS11_MODULE: must be set[\s\S]*PKCS11_TOKEN_LABEL[\s\S]*PKCS11_EVM_KEY_LABEL[\s\S]*PKCS11_STELLAR_KEY_LABEL/);
    // The PIN is the signing process's secret: checked per role by resolveSecrets, not by loadConfig.
    expect(() => resolveSecrets(loadConfig({ ...pkcs11, PKCS11_PIN_FILE: '/run/secrets/pin' }), 'api')).toThrow(/PKCS11_PIN: set exactly one of PKCS11_PIN and PKCS11_PIN_FILE/);
    expect(() => loadConfig({ RELAYER_SIGNER: 'kms' })).toThrow(/RELAYER_SIGNER: must be env or pkcs11/);
    const { RELAYER_SIGNER_ALLOW_ENV: _allowed, RELAYER_EVM_PRIVATE_KEY: _evm, RELAYER_STELLAR_SECRET: _stellar, ...noKeys } = productionEnv();
    const secrets = resolveSecrets(loadConfig({ ...noKeys, ...pkcs11 }));
    expect(secrets.relayerEvmPrivateKey).toBeUndefined();
    expect(secrets.relayerStellarSecret).toBeUndefined();
    expect(secrets.pkcs11Pin).toBe('1234');
  });

  it('gives the PKCS#11 PIN to signing processes only: a worker, prover or migrate given one exits naming it in production', () => {
    const { PKCS11_PIN: _pin, ...noPin } = pkcs11;
    const { RELAYER_SIGNER_ALLOW_ENV: _allowed, RELAYER_EVM_PRIVATE_KEY: _evm, RELAYER_STELLAR_SECRET: _stellar, JWT_SECRET: _jwt, SEP10_SIGNING_SECRET: _sep10, ...shared } = productionEnv();
    const pinFile = path.join(mkdtempSync(path.join(tmpdir(), 'pin-')), 'pin');
    writeFileSync(pinFile, '5678\n');
    expect(resolveSecrets(loadConfig({ ...shared, ...noPin, PKCS11_PIN_FILE: pinFile, JWT_SECRET: _jwt!, SEP10_SIGNING_SECRET: _sep10! }), 'api').pkcs11Pin).toBe('5678');
    for (const role of ['worker', 'prover', 'migrate'] as const) {
      expect(resolveSecrets(loadConfig({ ...shared, ...noPin }), role).pkcs11Pin, role).toBeUndefined();
      expect(() => resolveSecrets(loadConfig({ ...shared, ...pkcs11 }), role), role).toThrow(/PKCS11_PIN: the \w+ process does not use it/);
      expect(() => resolveSecrets(loadConfig({ ...shared, ...noPin, PKCS11_PIN_FILE: pinFile }), role), role).toThrow(/PKCS11_PIN_FILE: the \w+ process does not use it/);
    }
    expect(() => resolveSecrets(loadConfig({ ...shared, ...noPin, JWT_SECRET: _jwt!, SEP10_SIGNING_SECRET: _sep10! }), 'api')).toThrow(/PKCS11_PIN: set exactly one/);
  });
});

describe('key rotation settings', () => {
  it('wants RELAYER_KEY_SWITCH_AT with a previous relayer key and the reverse, as an ISO time', () => {
    const previous = Wallet.createRandom().privateKey;
    expect(() => loadConfig({ RELAYER_EVM_PREVIOUS_PRIVATE_KEY: previous })).toThrow(/RELAYER_KEY_SWITCH_AT: must be set with RELAYER_EVM_PREVIOUS_PRIVATE_KEY/);
    expect(() => loadConfig({ RELAYER_KEY_SWITCH_AT: '2026-12-01T12:00:00Z' })).toThrow(/RELAYER_KEY_SWITCH_AT: is set but no previous relayer key is/);
    expect(() => loadConfig({ RELAYER_EVM_PREVIOUS_PRIVATE_KEY: previous, RELAYER_KEY_SWITCH_AT: 'tomorrow' })).toThrow(/RELAYER_KEY_SWITCH_AT: must be an ISO 8601 time/);
    expect(loadConfig({ RELAYER_EVM_PREVIOUS_PRIVATE_KEY: previous, RELAYER_KEY_SWITCH_AT: '2026-12-01T12:00:00Z' }).RELAYER_KEY_SWITCH_AT).toBe(Date.parse('2026-12-01T12:00:00Z'));
    expect(() => loadConfig({ JWT_PREVIOUS_SECRET: randomBytes(32).toString('hex') })).toThrow(/JWT_KEY_SWITCH_AT: set JWT_PREVIOUS_SECRET and JWT_KEY_SWITCH_AT together/);
  });

  it('checks a previous key as strictly as the current one and gives it to the signing roles only', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rotation-secrets-'));
    expect(() => resolveSecrets(loadConfig({ DATA_DIR: dir, RELAYER_EVM_PREVIOUS_PRIVATE_KEY: '0x12', RELAYER_KEY_SWITCH_AT: '2026-12-01T12:00:00Z' }), 'api'))
      .toThrow(/RELAYER_EVM_PREVIOUS_PRIVATE_KEY: must be a 0x-prefixed 32-byte hex private key/);
    const previous = Keypair.random().secret();
    const env = { DATA_DIR: dir, RELAYER_STELLAR_PREVIOUS_SECRET: previous, RELAYER_KEY_SWITCH_AT: '2026-12-01T12:00:00Z' };
    expect(resolveSecrets(loadConfig(env), 'api').relayerStellarPreviousSecret).toBe(previous);
    expect(resolveSecrets(loadConfig(env), 'worker').relayerStellarPreviousSecret).toBeUndefined();
    const { RELAYER_EVM_PRIVATE_KEY: _evm, RELAYER_STELLAR_SECRET: _stellar, JWT_SECRET: _jwt, SEP10_SIGNING_SECRET: _sep10, ...shared } = productionEnv();
    expect(() => resolveSecrets(loadConfig({ ...shared, RELAYER_STELLAR_PREVIOUS_SECRET: previous, RELAYER_KEY_SWITCH_AT: '2026-12-01T12:00:00Z' }), 'worker'))
      .toThrow(/RELAYER_STELLAR_PREVIOUS_SECRET: the worker process does not use it/);
  });
});
