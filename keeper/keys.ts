import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Keypair, StrKey } from '@stellar/stellar-sdk';
import { SigningKey, Wallet } from 'ethers';
import { keeperEnabled } from '../config/concerns/keeper.ts';
import { ConfigError, type Config } from '../config/config.ts';
import { keeperSendsIn, WELL_KNOWN_DEV_KEYS, type ProcessRole } from '../config/secrets.ts';
import { createEnvSigner, type RelayerSigner } from '../chains/signers.ts';
import { createPkcs11Signer } from '../chains/signer/pkcs11.ts';

/** The keeper's raw keys (KEEPER_SIGNER=env). */
export interface KeeperKeys {
  evmPrivateKey: string;
  stellarSecret: string;
}

const SECP256K1_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * The keeper's keys for a process of `role` with KEEPER_SIGNER=env, or undefined when this process
 * sends nothing (the api, KEEPER_ENABLED=false) or the keys live in a token (KEEPER_SIGNER=pkcs11).
 * Outside production a missing key is generated once into `DATA_DIR/keeper-keys.json` (0600); in
 * production each must be given (the keeper concern's check), well formed, not one of anvil's public
 * development keys and not the relayer's request-signing key, else ConfigError naming it.
 */
export function resolveKeeperKeys(config: Config, role: ProcessRole): KeeperKeys | undefined {
  if (!keeperSendsIn(role, config) || !keeperEnabled(config) || config.KEEPER_SIGNER !== 'env') return undefined;
  const production = config.NODE_ENV === 'production';
  const file = path.join(config.DATA_DIR, 'keeper-keys.json');
  const stored: Partial<KeeperKeys> = !production && existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const generated: Partial<KeeperKeys> = {};
  // In production nothing is generated: a key must be given (the keeper concern says so for the worker; this for every sender).
  const required = ['KEEPER_EVM_PRIVATE_KEY', 'KEEPER_STELLAR_SECRET'] as const;
  const missing = production ? required.filter((name) => config[name] === undefined) : [];
  if (missing.length > 0) {
    throw new ConfigError(`invalid keeper keys:\n  ${missing.map((name) => `${name}: is required in production for the process that sends the keeper's `
      + 'transactions (or KEEPER_SIGNER=pkcs11 with PKCS11_KEEPER_*_KEY_LABEL, or KEEPER_ENABLED=false to run without a keeper)').join('\n  ')}`);
  }
  const evmPrivateKey = config.KEEPER_EVM_PRIVATE_KEY ?? stored.evmPrivateKey ?? (generated.evmPrivateKey = Wallet.createRandom().privateKey);
  const stellarSecret = config.KEEPER_STELLAR_SECRET ?? stored.stellarSecret ?? (generated.stellarSecret = Keypair.random().secret());
  const problems: string[] = [];
  if (!/^0x[0-9a-fA-F]{64}$/.test(evmPrivateKey) || BigInt(evmPrivateKey) === 0n || BigInt(evmPrivateKey) >= SECP256K1_ORDER) {
    problems.push('KEEPER_EVM_PRIVATE_KEY: must be a 0x-prefixed 32-byte hex private key');
  } else if (production && WELL_KNOWN_DEV_KEYS.has(evmPrivateKey.toLowerCase())) {
    problems.push('KEEPER_EVM_PRIVATE_KEY: is one of the public development keys: anyone could spend the keeper\'s gas');
  }
  if (!StrKey.isValidEd25519SecretSeed(stellarSecret)) problems.push('KEEPER_STELLAR_SECRET: must be a Stellar secret seed (S...)');
  // A keeper key compromised must move no user funds: it may never be the key the contracts trust for requests.
  if (config.RELAYER_EVM_PRIVATE_KEY !== undefined && config.RELAYER_EVM_PRIVATE_KEY.toLowerCase() === evmPrivateKey.toLowerCase()) {
    problems.push('KEEPER_EVM_PRIVATE_KEY: must not be the relayer\'s request-signing key (RELAYER_EVM_PRIVATE_KEY)');
  }
  if (config.RELAYER_STELLAR_SECRET !== undefined && config.RELAYER_STELLAR_SECRET === stellarSecret) {
    problems.push('KEEPER_STELLAR_SECRET: must not be the relayer\'s request-signing key (RELAYER_STELLAR_SECRET)');
  }
  if (problems.length > 0) throw new ConfigError(`invalid keeper keys:\n  ${problems.join('\n  ')}`);
  if (Object.keys(generated).length > 0) {
    mkdirSync(config.DATA_DIR, { recursive: true });
    writeFileSync(file, JSON.stringify({ ...stored, ...generated }, null, 2), { mode: 0o600 });
  }
  return { evmPrivateKey, stellarSecret };
}

/**
 * The keeper's signer, through the same seam as the relayer's (chains/signers.ts): over the raw keys
 * (KEEPER_SIGNER=env) or in the PKCS#11 token under the PKCS11_KEEPER_*_KEY_LABEL labels (PKCS11_MODULE's
 * token PKCS11_KEEPER_TOKEN_LABEL, else PKCS11_TOKEN_LABEL, opened with PKCS11_KEEPER_PIN, or outside
 * production PKCS11_PIN when that is unset). Undefined when this process sends nothing.
 */
export function keeperSignerFromConfig(config: Config, role: ProcessRole): RelayerSigner | undefined {
  if (!keeperSendsIn(role, config) || !keeperEnabled(config)) return undefined;
  if (config.KEEPER_SIGNER === 'pkcs11') {
    const tokenLabel = config.PKCS11_KEEPER_TOKEN_LABEL ?? config.PKCS11_TOKEN_LABEL;
    if (config.PKCS11_MODULE === undefined || tokenLabel === undefined) {
      throw new ConfigError('KEEPER_SIGNER=pkcs11 needs PKCS11_MODULE and PKCS11_KEEPER_TOKEN_LABEL (or PKCS11_TOKEN_LABEL)');
    }
    // The keeper's own PIN; outside production (one token for everything on a developer's machine) the relayer's serves.
    const ownPin = config.PKCS11_KEEPER_PIN !== undefined || config.PKCS11_KEEPER_PIN_FILE !== undefined;
    return createPkcs11Signer({
      module: config.PKCS11_MODULE,
      tokenLabel,
      pin: ownPin ? config.PKCS11_KEEPER_PIN : config.PKCS11_PIN,
      pinFile: ownPin ? config.PKCS11_KEEPER_PIN_FILE : config.PKCS11_PIN_FILE,
      evmKeyLabel: config.PKCS11_KEEPER_EVM_KEY_LABEL!,
      stellarKeyLabel: config.PKCS11_KEEPER_STELLAR_KEY_LABEL!,
    });
  }
  const keys = resolveKeeperKeys(config, role)!;
  return createEnvSigner(new SigningKey(keys.evmPrivateKey), Keypair.fromSecret(keys.stellarSecret));
}
