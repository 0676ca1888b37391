import { Keypair } from '@stellar/stellar-sdk';
import { SigningKey, computeAddress } from 'ethers';
import type { DomainNameVersion } from './evm/typed-data.ts';

/**
 * Where the relayer's two signing keys live, behind one asynchronous seam: in memory from the
 * environment (`RELAYER_SIGNER=env`, `createEnvSigner`) or in a PKCS#11 token
 * (`RELAYER_SIGNER=pkcs11`, chains/signer/pkcs11.ts). A cloud KMS would be one more implementation.
 */
export interface RelayerSigner {
  /** Which backend holds the keys (for the start-up log). */
  readonly backend: 'env' | 'pkcs11';
  /** The EVM address contracts must recover from a request's signature (checksummed). */
  evmAddress(): Promise<string>;
  /** secp256k1 over a 32-byte digest (0x hex): 65-byte r‖s‖v, low s, v 27 or 28, 0x hex. */
  signEvmDigest(digest: string): Promise<string>;
  /** The G... public key of the ed25519 key that signs Stellar requests. */
  stellarPublicKey(): Promise<string>;
  /** ed25519 over the 32-byte request hash: the 64-byte signature. */
  signStellar(hash: Buffer): Promise<Buffer>;
  /** Releases the backend (ends the PKCS#11 child process); a later call starts it again. */
  close(): Promise<void>;
  /**
   * The signer whose keys sign a request made at `nowMs` (Unix milliseconds). Present on a
   * rotating signer (`createRotatingSigner`): one request's signature and `signerPublicKey` then
   * come from the same key even when the switch falls between the two calls.
   */
  at?(nowMs: number): RelayerSigner;
}

/**
 * Key rotation without downtime (docs/security.md "Rotating keys"): `previous` signs every
 * request made before `switchAtMs` (Unix milliseconds, RELAYER_KEY_SWITCH_AT), `current` every one
 * made from then on. The contracts must trust `current` before the switch (the admin's
 * `rotateRelayer`) and keep accepting `previous` for a grace period longer than the switch's
 * distance plus the longest request TTL, so a request signed just before the switch still executes.
 * `clock` is for tests; the signed call data's own `now` decides per request (`at`).
 */
export function createRotatingSigner(
  previous: RelayerSigner,
  current: RelayerSigner,
  switchAtMs: number,
  clock: () => number = Date.now,
): RelayerSigner {
  const at = (nowMs: number): RelayerSigner => (nowMs < switchAtMs ? previous : current);
  const now = () => at(clock());
  return {
    backend: current.backend,
    evmAddress: () => now().evmAddress(),
    signEvmDigest: (digest) => now().signEvmDigest(digest),
    stellarPublicKey: () => now().stellarPublicKey(),
    signStellar: (hash) => now().signStellar(hash),
    close: async () => {
      await Promise.all([previous.close(), current.close()]);
    },
    at,
  };
}

/** The relayer's signer and the EIP-712 domain name/version its requests are signed under. */
export interface RelayerSigners {
  signer: RelayerSigner;
  domain: DomainNameVersion;
}

/** Signers over in-memory keys, with the keys themselves for tests and test vectors. */
export interface EnvRelayerSigners extends RelayerSigners {
  /** The EVM address of `evm`. */
  evmAddress: string;
  /** secp256k1 key: signs EIP-712 digests for EVM contracts. */
  evm: SigningKey;
  /** ed25519 key: signs Stellar request hashes. */
  stellar: Keypair;
}

/**
 * A signer over raw keys held in memory (`RELAYER_SIGNER=env`, today's behaviour): the EVM key
 * (0x hex) and the Stellar secret seed (S...). Signatures are the same as ethers' `SigningKey.sign`
 * and the Stellar SDK's `Keypair.sign`.
 */
export function createEnvSigner(evm: SigningKey, stellar: Keypair): RelayerSigner {
  const address = computeAddress(evm.publicKey);
  return {
    backend: 'env',
    evmAddress: async () => address,
    signEvmDigest: async (digest) => evm.sign(digest).serialized,
    stellarPublicKey: async () => stellar.publicKey(),
    signStellar: async (hash) => stellar.sign(hash),
    close: async () => {},
  };
}

/**
 * Builds the relayer's signers from resolved secrets (`resolveSecrets(config)`: generated outside
 * production, required in production) and the configured EIP-712 domain name and version.
 */
export function createRelayerSigners(
  secrets: { relayerEvmPrivateKey: string; relayerStellarSecret: string },
  domain: DomainNameVersion,
): EnvRelayerSigners {
  const evm = new SigningKey(secrets.relayerEvmPrivateKey);
  const stellar = Keypair.fromSecret(secrets.relayerStellarSecret);
  return {
    signer: createEnvSigner(evm, stellar),
    evm,
    evmAddress: computeAddress(evm.publicKey),
    stellar,
    domain: { name: domain.name, version: domain.version },
  };
}
