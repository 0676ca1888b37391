import { Keypair } from '@stellar/stellar-sdk';
import { SigningKey } from 'ethers';
import type { Config } from '../../config/config.ts';
import type { Secrets } from '../../config/secrets.ts';
import { createEnvSigner, type RelayerSigner } from '../signers.ts';
import { createPkcs11Signer } from './pkcs11.ts';

/**
 * The signer of a process that holds no relayer key (worker, prover): every call fails naming the
 * role, so a code path that would sign outside the API shows up as an error, never as a signature.
 */
export function noRelayerSigner(role: string): RelayerSigner {
  const refuse = () => Promise.reject(new Error(`the ${role} process holds no relayer key: only the api process signs requests`));
  return { backend: 'env', evmAddress: refuse, signEvmDigest: refuse, stellarPublicKey: refuse, signStellar: refuse, close: async () => {} };
}

/**
 * The relayer signer RELAYER_SIGNER names: `env` over the resolved secrets' raw keys, `pkcs11`
 * over the token the PKCS11_* settings name (validated by loadConfig). The PKCS#11 child process
 * starts on first use; `RelayerSigner.evmAddress()` at start-up checks the token early.
 */
export function relayerSignerFromConfig(config: Config, secrets: Secrets): RelayerSigner {
  if (config.RELAYER_SIGNER === 'pkcs11') {
    return createPkcs11Signer({
      module: config.PKCS11_MODULE!,
      tokenLabel: config.PKCS11_TOKEN_LABEL!,
      pin: config.PKCS11_PIN,
      pinFile: config.PKCS11_PIN_FILE,
      evmKeyLabel: config.PKCS11_EVM_KEY_LABEL!,
      stellarKeyLabel: config.PKCS11_STELLAR_KEY_LABEL!,
    });
  }
  if (!secrets.relayerEvmPrivateKey || !secrets.relayerStellarSecret) {
    throw new Error('RELAYER_SIGNER=env needs RELAYER_EVM_PRIVATE_KEY and RELAYER_STELLAR_SECRET (resolveSecrets)');
  }
  return createEnvSigner(new SigningKey(secrets.relayerEvmPrivateKey), Keypair.fromSecret(secrets.relayerStellarSecret));
}
