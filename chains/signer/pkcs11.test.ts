import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Keypair, StrKey } from '@stellar/stellar-sdk';
import { Signature, recoverAddress } from 'ethers';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildSignedCallData } from '../signed-call-data.ts';
import type { RelayerSigner } from '../signers.ts';
import { createPkcs11Signer, PKCS11_SIGNER_BINARY, type Pkcs11Settings } from './pkcs11.ts';
import { relayerSignerFromConfig } from './from-config.ts';
import { loadConfig } from '../../config/config.ts';
import { resolveSecrets } from '../../config/secrets.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { computeAddress } from 'ethers';
import { createSoftHsmToken, type SoftHsmToken } from '../../test/support/softhsm.ts';

/**
 * The PKCS#11 signer against a real token: SoftHSM2 (installed by the test setup), a token
 * initialised in a directory of its own, the relayer's keys generated inside it. Every signature is
 * checked by an independent verifier: ethers' `recoverAddress` for secp256k1, the Stellar SDK's
 * `Keypair.verify` for Ed25519.
 */

const SECP256K1_HALF_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n / 2n;

let token: SoftHsmToken;
let settings: Pkcs11Settings;
let signer: RelayerSigner;

beforeAll(() => {
  token = createSoftHsmToken(inject('softhsmModule'));
  settings = {
    module: token.env.PKCS11_MODULE!, tokenLabel: token.env.PKCS11_TOKEN_LABEL!, pinFile: token.env.PKCS11_PIN_FILE!,
    evmKeyLabel: token.env.PKCS11_EVM_KEY_LABEL!, stellarKeyLabel: token.env.PKCS11_STELLAR_KEY_LABEL!,
  };
  signer = createPkcs11Signer(settings);
});

afterAll(async () => {
  await signer?.close();
  token?.remove();
});

describe('the PKCS#11 signer on SoftHSM2', () => {
  it('reads the token\'s public keys: the EVM address and the Stellar key of the keys generated inside it', async () => {
    expect(signer.backend).toBe('pkcs11');
    expect(await signer.evmAddress()).toBe(token.evmAddress);
    expect(await signer.stellarPublicKey()).toBe(token.stellarPublicKey);
    expect(StrKey.isValidEd25519PublicKey(await signer.stellarPublicKey())).toBe(true);
  });

  it('signs secp256k1 digests that ethers recovers to the token\'s address, always with a low s and v 27 or 28', async () => {
    const address = await signer.evmAddress();
    const digests = Array.from({ length: 64 }, () => `0x${randomBytes(32).toString('hex')}`);
    // Concurrent requests: the child answers each by id.
    const signatures = await Promise.all(digests.map((digest) => signer.signEvmDigest(digest)));
    for (const [i, serialized] of signatures.entries()) {
      expect(serialized).toMatch(/^0x[0-9a-f]{130}$/);
      expect(recoverAddress(digests[i]!, serialized)).toBe(address);
      const signature = Signature.from(serialized);
      expect(BigInt(signature.s) <= SECP256K1_HALF_N).toBe(true);
      expect([27, 28]).toContain(signature.v);
    }
    // ECDSA over random digests: about half the token's raw signatures had a high s, and both v values occur.
    expect(new Set(signatures.map((serialized) => Signature.from(serialized).v)).size).toBe(2);
  });

  it('signs Ed25519 messages that the Stellar SDK verifies against the token\'s key, and that fail for another message', async () => {
    const verifier = Keypair.fromPublicKey(await signer.stellarPublicKey());
    for (let i = 0; i < 16; i++) {
      const hash = randomBytes(32);
      const signature = await signer.signStellar(hash);
      expect(signature).toHaveLength(64);
      expect(verifier.verify(hash, signature)).toBe(true);
      expect(verifier.verify(randomBytes(32), signature)).toBe(false);
    }
  });

  it('makes the signed call data of both chain kinds: EIP-712 recoverable to the token\'s address, Stellar verifiable with the returned signer key', async () => {
    const signers = { signer, domain: { name: 'ProofBridge', version: '1' } };
    const evm = await buildSignedCallData({
      target: { kind: 'EVM', chainId: '31337', contractAddress: '0x5FbDB2315678afecb367f032d93F642f64180aa3' },
      action: 'fundAd', fields: { adId: '0f8fad5b-d9cb-469f-a165-70867728950e', amount: 1_000n }, signers, ttlSeconds: 600,
    });
    expect(recoverAddress(evm.reqHash, evm.signature)).toBe(token.evmAddress);
    const stellar = await buildSignedCallData({
      target: { kind: 'STELLAR', chainId: '148', contractAddress: StrKey.encodeContract(Buffer.alloc(32, 7)), networkPassphrase: 'Standalone Network ; February 2017' },
      action: 'closeAd', fields: { adId: '0f8fad5b-d9cb-469f-a165-70867728950e', to: Keypair.random().publicKey() }, signers, ttlSeconds: 600,
    });
    expect(stellar.signerPublicKey).toBe(token.stellarPublicKey);
    expect(Keypair.fromPublicKey(stellar.signerPublicKey!).verify(Buffer.from(stellar.reqHash.slice(2), 'hex'), Buffer.from(stellar.signature.slice(2), 'hex'))).toBe(true);
  });

  it('keeps the private keys in the token: sensitive and never extractable', () => {
    const listing = execFileSync('pkcs11-tool', ['--module', settings.module, '--token-label', settings.tokenLabel, '--login', '--pin', readFileSync(settings.pinFile!, 'utf8').trim(), '--list-objects', '--type', 'privkey'], { encoding: 'utf8' });
    const keys = listing.split(/\n(?=Private Key Object)/).filter((block) => block.startsWith('Private Key Object'));
    expect(keys).toHaveLength(2);
    for (const key of keys) expect(key).toMatch(/Access:\s+sensitive, always sensitive, never extractable, local/);
  });

  it('refuses with the token\'s reason: a wrong PIN, an unknown key label, a token that is not there', async () => {
    const wrongPin = createPkcs11Signer({ ...settings, pinFile: undefined, pin: '000000' });
    await expect(wrongPin.evmAddress()).rejects.toThrow(/C_Login \(PKCS11_PIN\)/);
    const unknownKey = createPkcs11Signer({ ...settings, evmKeyLabel: 'no-such-key' });
    await expect(unknownKey.signEvmDigest(`0x${'ab'.repeat(32)}`)).rejects.toThrow(/no CKO_PUBLIC_KEY labelled 'no-such-key'|no CKO_PRIVATE_KEY labelled 'no-such-key'/);
    await unknownKey.close();
    const noToken = createPkcs11Signer({ ...settings, tokenLabel: 'elsewhere' });
    await expect(noToken.stellarPublicKey()).rejects.toThrow(/PKCS11_TOKEN_LABEL: no token labelled 'elsewhere'/);
    // The working signer is untouched by the others' failures.
    expect(await signer.evmAddress()).toBe(token.evmAddress);
  });
});

describe('key rotation with the keys in the token (PKCS11_*_PREVIOUS_KEY_LABEL, RELAYER_KEY_SWITCH_AT)', () => {
  it('signs with the previous labels before the switch and the new ones from it, the PIN read by the signing role alone', async () => {
    const generate = (curve: string, label: string) =>
      execFileSync(PKCS11_SIGNER_BINARY, ['generate', '--curve', curve, '--label', label], { env: { ...process.env, ...token.env }, encoding: 'utf8' }).trim();
    const nextEvm = computeAddress(`0x${generate('secp256k1', 'relayer-evm-next')}`);
    const nextStellar = StrKey.encodeEd25519PublicKey(Buffer.from(generate('ed25519', 'relayer-stellar-next'), 'hex'));
    const switchAt = Date.now() + 3_600_000;
    const config = loadConfig({
      ...token.env,
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'pkcs11-rotation-')),
      PKCS11_EVM_KEY_LABEL: 'relayer-evm-next', PKCS11_STELLAR_KEY_LABEL: 'relayer-stellar-next',
      PKCS11_EVM_PREVIOUS_KEY_LABEL: token.env.PKCS11_EVM_KEY_LABEL!, PKCS11_STELLAR_PREVIOUS_KEY_LABEL: token.env.PKCS11_STELLAR_KEY_LABEL!,
      RELAYER_KEY_SWITCH_AT: new Date(switchAt).toISOString(),
    });
    const secrets = resolveSecrets(config, 'api');
    expect(secrets.pkcs11Pin).toBe('246810');
    const rotating = relayerSignerFromConfig(config, secrets);
    try {
      const build = (kind: 'EVM' | 'STELLAR', now: number) => buildSignedCallData({
        target: kind === 'EVM'
          ? { kind, chainId: '31337', contractAddress: '0x5FbDB2315678afecb367f032d93F642f64180aa3' }
          : { kind, chainId: '148', contractAddress: StrKey.encodeContract(Buffer.alloc(32, 9)), networkPassphrase: 'Standalone Network ; February 2017' },
        action: 'fundAd',
        fields: { adId: '0f8fad5b-d9cb-469f-a165-70867728950e', amount: 7n },
        signers: { signer: rotating, domain: { name: 'ProofBridge', version: '1' } },
        ttlSeconds: 600,
        now,
      });
      const before = await build('EVM', switchAt - 1);
      const after = await build('EVM', switchAt);
      expect(recoverAddress(before.reqHash, before.signature)).toBe(token.evmAddress);
      expect(recoverAddress(after.reqHash, after.signature)).toBe(nextEvm);
      expect((await build('STELLAR', switchAt - 1)).signerPublicKey).toBe(token.stellarPublicKey);
      const stellarAfter = await build('STELLAR', switchAt);
      expect(stellarAfter.signerPublicKey).toBe(nextStellar);
      expect(Keypair.fromPublicKey(nextStellar).verify(Buffer.from(stellarAfter.reqHash.slice(2), 'hex'), Buffer.from(stellarAfter.signature.slice(2), 'hex'))).toBe(true);
      expect(await rotating.evmAddress()).toBe(token.evmAddress);
    } finally {
      await rotating.close();
    }
  });
});
