import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Keypair, StrKey } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { ConfigError, type Config } from './config.ts';

/** Every secret the service holds. None has a built-in default. */
export interface Secrets {
  jwtSecret: string;
  sep10SigningSecret: string;
  relayerEvmPrivateKey: string;
  relayerStellarSecret: string;
}

type SecretName = keyof Secrets;

const ENV_NAMES: Record<SecretName, keyof Config> = {
  jwtSecret: 'JWT_SECRET',
  sep10SigningSecret: 'SEP10_SIGNING_SECRET',
  relayerEvmPrivateKey: 'RELAYER_EVM_PRIVATE_KEY',
  relayerStellarSecret: 'RELAYER_STELLAR_SECRET',
};

const generators: Record<SecretName, () => string> = {
  jwtSecret: () => randomBytes(48).toString('base64url'),
  sep10SigningSecret: () => Keypair.random().secret(),
  relayerEvmPrivateKey: () => Wallet.createRandom().privateKey,
  relayerStellarSecret: () => Keypair.random().secret(),
};

/** Why a value is unusable as the named secret, or null when it is fine. */
function weakness(name: SecretName, value: string): string | null {
  switch (name) {
    case 'jwtSecret':
      if (Buffer.byteLength(value) < 32) return 'must be at least 32 bytes';
      if (new Set(value).size < 10) return 'is too repetitive to be a secret';
      return null;
    case 'sep10SigningSecret':
    case 'relayerStellarSecret':
      return StrKey.isValidEd25519SecretSeed(value) ? null : 'must be a Stellar secret seed (S...)';
    case 'relayerEvmPrivateKey': {
      if (!/^0x[0-9a-fA-F]{64}$/.test(value)) return 'must be a 0x-prefixed 32-byte hex private key';
      const scalar = BigInt(value);
      const order = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
      // Anvil's well-known development keys are public: never sign production requests with them.
      if (scalar === 0n || scalar >= order || WELL_KNOWN_DEV_KEYS.has(value.toLowerCase())) return 'is not a usable private key';
      return null;
    }
  }
}

const WELL_KNOWN_DEV_KEYS = new Set([
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
]);

/**
 * Resolves every secret from config. In production each must be set and strong, else start-up
 * fails naming it. Outside production a missing secret is generated once and kept in
 * `DATA_DIR/secrets.json` (mode 0600), so sessions and keys survive restarts.
 */
export function resolveSecrets(config: Config): Secrets {
  const file = path.join(config.DATA_DIR, 'secrets.json');
  const stored: Partial<Secrets> =
    config.NODE_ENV !== 'production' && existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const problems: string[] = [];
  const resolved = {} as Secrets;
  const generated: Partial<Secrets> = {};
  for (const name of Object.keys(ENV_NAMES) as SecretName[]) {
    const envName = ENV_NAMES[name];
    const fromEnv = config[envName] as string | undefined;
    let value = fromEnv ?? stored[name];
    if (value === undefined) {
      if (config.NODE_ENV === 'production') {
        problems.push(`${envName}: required in production`);
        continue;
      }
      value = generators[name]();
      generated[name] = value;
    }
    const problem = weakness(name, value);
    if (problem) problems.push(`${envName}: ${problem}`);
    resolved[name] = value;
  }
  if (problems.length > 0) throw new ConfigError(`invalid secrets:\n  ${problems.join('\n  ')}`);
  // Only generated values are written: a secret given in the environment never lands on disk.
  if (Object.keys(generated).length > 0) {
    mkdirSync(config.DATA_DIR, { recursive: true });
    writeFileSync(file, JSON.stringify({ ...stored, ...generated }, null, 2), { mode: 0o600 });
  }
  return resolved;
}
