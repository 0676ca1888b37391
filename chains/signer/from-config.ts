import { Keypair } from '@stellar/stellar-sdk';
import { SigningKey } from 'ethers';
import type { Config } from '../../config/config.ts';
import type { Secrets } from '../../config/secrets.ts';
import { createEnvSigner, createRotatingSigner, type RelayerSigner } from '../signers.ts';
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
 * over the token the PKCS11_* settings name (validated by loadConfig; the PIN is the signing
 * process's secret, `secrets.pkcs11Pin`). The PKCS#11 child process starts on first use;
 * `RelayerSigner.evmAddress()` at start-up checks the token early. With RELAYER_KEY_SWITCH_AT set
 * (key rotation, docs/security.md "Rotating keys"), a rotating signer: the previous keys sign before that
 * moment, the current ones from it on; a key with no previous one set is its own previous.
 */
export function relayerSignerFromConfig(config: Config, secrets: Secrets): RelayerSigner {
  const current = signerOf(config, secrets, 'current');
  if (config.RELAYER_KEY_SWITCH_AT === undefined) return current;
  return createRotatingSigner(signerOf(config, secrets, 'previous'), current, config.RELAYER_KEY_SWITCH_AT);
}

function signerOf(config: Config, secrets: Secrets, which: 'current' | 'previous'): RelayerSigner {
  const previous = which === 'previous';
  if (config.RELAYER_SIGNER === 'pkcs11') {
    if (secrets.pkcs11Pin === undefined) throw new Error('RELAYER_SIGNER=pkcs11 needs the token PIN (PKCS11_PIN or PKCS11_PIN_FILE; resolveSecrets)');
    return createPkcs11Signer({
      module: config.PKCS11_MODULE!,
      tokenLabel: config.PKCS11_TOKEN_LABEL!,
      pin: secrets.pkcs11Pin,
      evmKeyLabel: (previous ? config.PKCS11_EVM_PREVIOUS_KEY_LABEL : undefined) ?? config.PKCS11_EVM_KEY_LABEL!,
      stellarKeyLabel: (previous ? config.PKCS11_STELLAR_PREVIOUS_KEY_LABEL : undefined) ?? config.PKCS11_STELLAR_KEY_LABEL!,
    });
  }
  if (!secrets.relayerEvmPrivateKey || !secrets.relayerStellarSecret) {
    throw new Error('RELAYER_SIGNER=env needs RELAYER_EVM_PRIVATE_KEY and RELAYER_STELLAR_SECRET (resolveSecrets)');
  }
  const evm = (previous ? secrets.relayerEvmPreviousPrivateKey : undefined) ?? secrets.relayerEvmPrivateKey;
  const stellar = (previous ? secrets.relayerStellarPreviousSecret : undefined) ?? secrets.relayerStellarSecret;
  return createEnvSigner(new SigningKey(evm), Keypair.fromSecret(stellar));
}
