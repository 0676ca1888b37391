import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { StrKey } from '@stellar/stellar-sdk';
import { computeAddress } from 'ethers';
import { PKCS11_SIGNER_BINARY } from '../../chains/signer/pkcs11.ts';

/** A fresh SoftHSM2 token with the relayer's two key pairs generated inside it. */
export interface SoftHsmToken {
  /** The settings a service process needs to sign with it (RELAYER_SIGNER=pkcs11, PKCS11_*, SOFTHSM2_CONF). */
  env: Record<string, string>;
  /** The EVM address of the token's secp256k1 key (from its public key, never from a private one). */
  evmAddress: string;
  /** The G... key of the token's Ed25519 key. */
  stellarPublicKey: string;
  /** Removes the token's directory. */
  remove(): void;
}

/**
 * Initialises a SoftHSM2 token in a temporary directory of its own (SOFTHSM2_CONF, so tests never
 * share a token) and generates the relayer's keys inside it with `relayer-pkcs11-signer generate`
 * (secp256k1 and Ed25519, private keys sensitive and not extractable). The PIN is given as a PIN
 * file. SOFTHSM2_CONF is also set in this process, so signers made here find the token.
 */
export function createSoftHsmToken(module: string, label = 'relayer'): SoftHsmToken {
  const dir = mkdtempSync(path.join(tmpdir(), 'relayer-softhsm-'));
  mkdirSync(path.join(dir, 'tokens'));
  const conf = path.join(dir, 'softhsm2.conf');
  writeFileSync(conf, `directories.tokendir = ${path.join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  const pinFile = path.join(dir, 'pin');
  writeFileSync(pinFile, '246810\n', { mode: 0o600 });
  const env = {
    RELAYER_SIGNER: 'pkcs11', PKCS11_MODULE: module, PKCS11_TOKEN_LABEL: label, PKCS11_PIN_FILE: pinFile,
    PKCS11_EVM_KEY_LABEL: 'relayer-evm', PKCS11_STELLAR_KEY_LABEL: 'relayer-stellar', SOFTHSM2_CONF: conf,
  };
  const childEnv = { ...process.env, ...env };
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', label, '--so-pin', '13579135', '--pin', '246810'], { env: childEnv, stdio: 'ignore' });
  const generate = (curve: string, keyLabel: string) =>
    execFileSync(PKCS11_SIGNER_BINARY, ['generate', '--curve', curve, '--label', keyLabel], { env: childEnv, encoding: 'utf8' }).trim();
  const evmPoint = generate('secp256k1', env.PKCS11_EVM_KEY_LABEL);
  const stellarKey = generate('ed25519', env.PKCS11_STELLAR_KEY_LABEL);
  process.env.SOFTHSM2_CONF = conf;
  return {
    env,
    evmAddress: computeAddress(`0x${evmPoint}`),
    stellarPublicKey: StrKey.encodeEd25519PublicKey(Buffer.from(stellarKey, 'hex')),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
