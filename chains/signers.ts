import { Keypair } from '@stellar/stellar-sdk';
import { SigningKey, computeAddress } from 'ethers';
import type { DomainNameVersion } from './evm/typed-data.ts';

/** The relayer's two keys and the EIP-712 domain name/version its requests are signed under. */
export interface RelayerSigners {
  /** secp256k1 key: signs EIP-712 digests for EVM contracts. */
  evm: SigningKey;
  /** The EVM address contracts must recover from a request's signature. */
  evmAddress: string;
  /** ed25519 key: signs Stellar request hashes. */
  stellar: Keypair;
  domain: DomainNameVersion;
}

/**
 * Builds the relayer's signers from resolved secrets (`resolveSecrets(config)`: generated outside
 * production, required in production) and the configured EIP-712 domain name and version.
 */
export function createRelayerSigners(
  secrets: { relayerEvmPrivateKey: string; relayerStellarSecret: string },
  domain: DomainNameVersion,
): RelayerSigners {
  const evm = new SigningKey(secrets.relayerEvmPrivateKey);
  return {
    evm,
    evmAddress: computeAddress(evm.publicKey),
    stellar: Keypair.fromSecret(secrets.relayerStellarSecret),
    domain: { name: domain.name, version: domain.version },
  };
}
