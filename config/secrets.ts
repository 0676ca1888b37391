import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Keypair, StrKey } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { ConfigError, type Config } from './config.ts';
import type { ProcessRole } from './roles.ts';

/**
 * The secrets a process holds: only those of its role (`SECRETS_OF_ROLE`). None has a built-in
 * default. A process whose role does not use one has it undefined.
 */
export interface Secrets {
  /** api and embedded only: signs and verifies access tokens. */
  jwtSecret?: string;
  /** api and embedded only: signs SEP-10 challenges. */
  sep10SigningSecret?: string;
  /** Absent with RELAYER_SIGNER=pkcs11: the relayer's keys are in the token, not here. */
  relayerEvmPrivateKey?: string;
  relayerStellarSecret?: string;
  /** Key rotation only (optional, never generated): the keys being replaced (docs/security.md "Rotating keys"). */
  jwtPreviousSecret?: string;
  relayerEvmPreviousPrivateKey?: string;
  relayerStellarPreviousSecret?: string;
  /**
   * RELAYER_SIGNER=pkcs11 only: the token's user PIN (PKCS11_PIN, or the first line of
   * PKCS11_PIN_FILE). Only a process that signs relayer requests holds it.
   */
  pkcs11Pin?: string;
}

type SecretName = keyof Secrets;

export type { ProcessRole } from './roles.ts';

/**
 * The secrets each role uses. Only the API signs (requests, unlocks, ad actions: the relayer keys;
 * access tokens: JWT; sign-in challenges: SEP-10) and verifies (JWT); the worker's activities read
 * chains, prove through the prover and write state, and its webhook deliveries are signed with each
 * endpoint's own secret kept in PostgreSQL; the prover proves; migrate changes the schema.
 */
const SIGNING_SECRETS: readonly SecretName[] = [
  'jwtSecret', 'sep10SigningSecret', 'relayerEvmPrivateKey', 'relayerStellarSecret',
  'jwtPreviousSecret', 'relayerEvmPreviousPrivateKey', 'relayerStellarPreviousSecret', 'pkcs11Pin',
];

export const SECRETS_OF_ROLE: Record<ProcessRole, readonly SecretName[]> = {
  api: SIGNING_SECRETS,
  embedded: SIGNING_SECRETS,
  worker: [],
  prover: [],
  migrate: [],
};

/** Whether a process of `role` signs relayer requests (and so builds a relayer signer). */
export function roleSignsRequests(role: ProcessRole): boolean {
  return SECRETS_OF_ROLE[role].includes('relayerEvmPrivateKey');
}

/** The environment variables holding the secrets a process of `role` must not hold. */
export function secretsForeignTo(role: ProcessRole, config: Pick<Config, 'TEMPORAL_ADDRESS'> = {}): (keyof Config)[] {
  const names = (Object.keys(ENV_NAMES) as SecretName[]).filter((name) => !SECRETS_OF_ROLE[role].includes(name));
  // The keeper's keys (keeper/keys.ts) belong to the process that sends its transactions alone.
  const keeperKeys: (keyof Config)[] = keeperSendsIn(role, config)
    ? [] : ['KEEPER_EVM_PRIVATE_KEY', 'KEEPER_STELLAR_SECRET', 'PKCS11_KEEPER_PIN', 'PKCS11_KEEPER_PIN_FILE'];
  const signing = names.flatMap((name): (keyof Config)[] => (name === 'pkcs11Pin' ? ['PKCS11_PIN', 'PKCS11_PIN_FILE'] : [ENV_NAMES[name]]));
  return [...signing, ...keeperKeys];
}

/**
 * Whether a process of `role` sends the keeper's transactions, so may hold its keys: the worker, the
 * embedded run, and an api that runs the embedded orchestrator itself (no TEMPORAL_ADDRESS: it runs
 * everything a worker would, and nothing else would send them). On Temporal the api never does: the
 * gas keys stay out of the internet-facing process.
 */
export function keeperSendsIn(role: ProcessRole, config: Pick<Config, 'TEMPORAL_ADDRESS'>): boolean {
  return role === 'worker' || role === 'embedded' || (role === 'api' && !config.TEMPORAL_ADDRESS);
}

/** Secrets only a key rotation (or an HSM) sets: never required, never generated, checked when present. */
const OPTIONAL_SECRETS: ReadonlySet<SecretName> = new Set(['jwtPreviousSecret', 'relayerEvmPreviousPrivateKey', 'relayerStellarPreviousSecret']);

const ENV_NAMES: Record<SecretName, keyof Config> = {
  jwtSecret: 'JWT_SECRET',
  sep10SigningSecret: 'SEP10_SIGNING_SECRET',
  relayerEvmPrivateKey: 'RELAYER_EVM_PRIVATE_KEY',
  relayerStellarSecret: 'RELAYER_STELLAR_SECRET',
  jwtPreviousSecret: 'JWT_PREVIOUS_SECRET',
  relayerEvmPreviousPrivateKey: 'RELAYER_EVM_PREVIOUS_PRIVATE_KEY',
  relayerStellarPreviousSecret: 'RELAYER_STELLAR_PREVIOUS_SECRET',
  pkcs11Pin: 'PKCS11_PIN',
};

const generators: Partial<Record<SecretName, () => string>> = {
  jwtSecret: () => randomBytes(48).toString('base64url'),
  sep10SigningSecret: () => Keypair.random().secret(),
  relayerEvmPrivateKey: () => Wallet.createRandom().privateKey,
  relayerStellarSecret: () => Keypair.random().secret(),
};

/** Why a value is unusable as the named secret, or null when it is fine. Production asks more of the JWT key. */
function weakness(name: SecretName, value: string, production: boolean): string | null {
  switch (name) {
    case 'jwtSecret':
    case 'jwtPreviousSecret':
      if (Buffer.byteLength(value) < 32) return 'must be at least 32 bytes';
      if (new Set(value).size < 10) return 'is too repetitive to be a secret';
      return production ? jwtSecretWeakness(value) : null;
    case 'sep10SigningSecret':
    case 'relayerStellarSecret':
    case 'relayerStellarPreviousSecret':
      return StrKey.isValidEd25519SecretSeed(value) ? null : 'must be a Stellar secret seed (S...)';
    case 'pkcs11Pin':
      return null;
    case 'relayerEvmPrivateKey':
    case 'relayerEvmPreviousPrivateKey': {
      if (!/^0x[0-9a-fA-F]{64}$/.test(value)) return 'must be a 0x-prefixed 32-byte hex private key';
      const scalar = BigInt(value);
      const order = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
      // Anvil's well-known development keys are public: never sign production requests with them.
      if (scalar === 0n || scalar >= order || WELL_KNOWN_DEV_KEYS.has(value.toLowerCase())) return 'is not a usable private key';
      return null;
    }
  }
}

/**
 * The private keys of the ten accounts anvil (and Hardhat) fund by default: derived from the public
 * mnemonic "test test test test test test test test test test test junk" (m/44'/60'/0'/0/0..9), so
 * anyone can sign with them. `secrets.test.ts` derives them again to check this list.
 */
export const WELL_KNOWN_DEV_KEYS: ReadonlySet<string> = new Set([
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
  '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba',
  '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e',
  '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356',
  '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97',
  '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6',
]);

/** Bits of entropy a production JWT key must carry at least (HS256's full strength). */
const MIN_JWT_ENTROPY_BITS = 256;

/**
 * An upper bound on the entropy of `value` if it were drawn at random from the alphabet it appears to
 * use: hex 16 symbols, base64 64, otherwise the size of each character class present. Patterns are
 * caught separately (below): this bound is only honest for random-looking strings.
 */
export function estimatedEntropyBits(value: string): number {
  const chars = [...value];
  let alphabet: number;
  if (/^[0-9a-f]+$/.test(value) || /^[0-9A-F]+$/.test(value)) alphabet = 16;
  else if (/^[A-Za-z0-9+/_-]+=*$/.test(value)) alphabet = 64;
  else {
    alphabet = 0;
    if (/[a-z]/.test(value)) alphabet += 26;
    if (/[A-Z]/.test(value)) alphabet += 26;
    if (/[0-9]/.test(value)) alphabet += 10;
    if (/[^A-Za-z0-9]/.test(value)) alphabet += 33;
  }
  return chars.length * Math.log2(alphabet);
}

/**
 * Why `value` is not a production-grade JWT key, or null: below 256 bits of entropy, or an obvious
 * pattern (one character class only, a character repeated through it, a short cycle repeated, a long
 * run of consecutive characters like "abcdefgh" or "98765432"). A random key of 32 bytes or more, hex
 * or base64 encoded (`openssl rand -hex 32`, `openssl rand -base64 32`), passes.
 */
export function jwtSecretWeakness(value: string): string | null {
  const chars = [...value];
  const bits = Math.floor(estimatedEntropyBits(value));
  if (bits < MIN_JWT_ENTROPY_BITS) {
    return `carries at most ${bits} bits of entropy; at least ${MIN_JWT_ENTROPY_BITS} are needed (e.g. openssl rand -hex 32)`;
  }
  const classes = [/^[a-z]+$/, /^[A-Z]+$/, /^[0-9]+$/, /^[^A-Za-z0-9]+$/];
  if (classes.some((only) => only.test(value))) return 'uses a single character class: not a random key';
  const counts = new Map<string, number>();
  for (const c of chars) counts.set(c, (counts.get(c) ?? 0) + 1);
  if (Math.max(...counts.values()) > chars.length / 4) return 'repeats one character through a quarter of its length: not a random key';
  // The smallest period p with chars[i] === chars[i - p] everywhere: a random key has none below its length.
  for (let period = 1; period <= chars.length / 2; period += 1) {
    if (chars.every((c, i) => i < period || c === chars[i - period])) return `repeats a ${period}-character cycle: not a random key`;
  }
  // A cycle repeated with something around it ("Secret1!Secret1!Secret1!xyz"): its 4-character windows
  // recur, where a random key's (of 16^4 or more possible) almost never do.
  const windows = chars.slice(3).map((_, i) => chars.slice(i, i + 4).join(''));
  if (new Set(windows).size < windows.length * 0.75) return 'repeats short cycles: not a random key';
  // Characters run up or down one code point at a time ("abcdefgh", "98765432").
  let run = 1;
  let lastStep = 0;
  for (let i = 1; i < chars.length; i += 1) {
    const step = chars[i]!.codePointAt(0)! - chars[i - 1]!.codePointAt(0)!;
    const sequential = step === 1 || step === -1;
    run = sequential ? (step === lastStep ? run + 1 : 2) : 1;
    lastStep = step;
    if (run >= 8) return 'contains a run of consecutive characters: not a random key';
  }
  return null;
}

/**
 * Resolves the secrets of `role` (`SECRETS_OF_ROLE`) from config. In production a process given a
 * secret its role does not use refuses to start naming it (ConfigError, exit 78): the point of one
 * Secret per role is that a worker, prover or migrate pod cannot hold a signing key, so a mounted
 * one is a deployment error, not something to ignore. Outside production it is ignored. In production each must be set and strong, else start-up
 * fails naming it (ConfigError; the process exits 78): anvil's ten public development keys, a
 * SEP-10 key that is also the relayer's Stellar key, and a JWT key below 256 bits or of an obvious
 * pattern are refused. With RELAYER_SIGNER=pkcs11 the relayer's two keys are not secrets of the
 * process (they stay in the token) and are left out. Outside production a missing secret is generated once and kept in
 * `DATA_DIR/secrets.json` (mode 0600), so sessions and keys survive restarts.
 */
export function resolveSecrets(config: Config, role: ProcessRole = 'embedded'): Secrets {
  const file = path.join(config.DATA_DIR, 'secrets.json');
  const stored: Partial<Secrets> =
    config.NODE_ENV !== 'production' && existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const problems: string[] = [];
  if (config.NODE_ENV === 'production') {
    for (const envName of secretsForeignTo(role, config)) {
      if (config[envName] !== undefined) {
        problems.push(`${envName}: the ${role} process does not use it and must not hold it in production ` +
          `(docs/configuration.md "Secrets per process"): remove it from this process's environment`);
      }
    }
  }
  const resolved = {} as Secrets;
  const generated: Partial<Secrets> = {};
  // With an HSM the relayer's keys live in the token: none is asked for, generated or kept here;
  // the token's PIN is asked for instead (a signing role only). Without one, no PIN.
  const hsm = config.RELAYER_SIGNER === 'pkcs11';
  const envKeys: ReadonlySet<SecretName> = new Set([
    'relayerEvmPrivateKey',
    'relayerStellarSecret',
    'relayerEvmPreviousPrivateKey',
    'relayerStellarPreviousSecret',
  ]);
  const wanted = SECRETS_OF_ROLE[role].filter((name) => (hsm ? !envKeys.has(name) : name !== 'pkcs11Pin'));
  for (const name of wanted) {
    const envName = ENV_NAMES[name];
    if (name === 'pkcs11Pin') {
      const pin = pkcs11Pin(config);
      if (typeof pin === 'string') resolved.pkcs11Pin = pin;
      else problems.push(pin.problem);
      continue;
    }
    const fromEnv = config[envName] as string | undefined;
    if (OPTIONAL_SECRETS.has(name)) {
      if (fromEnv === undefined) continue;
      const problem = weakness(name, fromEnv, config.NODE_ENV === 'production');
      if (problem) problems.push(`${envName}: ${problem}`);
      resolved[name] = fromEnv;
      continue;
    }
    let value = fromEnv ?? stored[name];
    if (value === undefined) {
      if (config.NODE_ENV === 'production') {
        problems.push(`${envName}: required in production`);
        continue;
      }
      value = generators[name]!();
      generated[name] = value;
    }
    const problem = weakness(name, value, config.NODE_ENV === 'production');
    if (problem) problems.push(`${envName}: ${problem}`);
    resolved[name] = value;
  }
  if (config.NODE_ENV === 'production' && resolved.sep10SigningSecret !== undefined && resolved.sep10SigningSecret === resolved.relayerStellarSecret) {
    // One key would then both sign sign-in challenges and authorise contract calls: a challenge
    // signature must never be usable as a relayer signature.
    problems.push('SEP10_SIGNING_SECRET: must not be the same key as RELAYER_STELLAR_SECRET');
  }
  if (problems.length > 0) throw new ConfigError(`invalid secrets:\n  ${problems.join('\n  ')}`);
  // Only generated values are written: a secret given in the environment never lands on disk.
  if (Object.keys(generated).length > 0) {
    mkdirSync(config.DATA_DIR, { recursive: true });
    writeFileSync(file, JSON.stringify({ ...stored, ...generated }, null, 2), { mode: 0o600 });
  }
  return resolved;
}

/** The PKCS#11 user PIN of a signing process: PKCS11_PIN, or the first line of PKCS11_PIN_FILE (exactly one). */
function pkcs11Pin(config: Config): string | { problem: string } {
  if ((config.PKCS11_PIN === undefined) === (config.PKCS11_PIN_FILE === undefined)) {
    return { problem: 'PKCS11_PIN: set exactly one of PKCS11_PIN and PKCS11_PIN_FILE in a process that signs with RELAYER_SIGNER=pkcs11' };
  }
  if (config.PKCS11_PIN !== undefined) return config.PKCS11_PIN;
  let pin: string | undefined;
  try {
    pin = readFileSync(config.PKCS11_PIN_FILE!, 'utf8').split(/\r?\n/)[0]?.trim();
  } catch (error) {
    return { problem: `PKCS11_PIN_FILE: cannot read ${config.PKCS11_PIN_FILE}: ${(error as Error).message}` };
  }
  return pin ? pin : { problem: `PKCS11_PIN_FILE: ${config.PKCS11_PIN_FILE} holds no PIN on its first line` };
}
