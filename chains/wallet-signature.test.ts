import { Keypair } from '@stellar/stellar-sdk';
import { Wallet } from 'ethers';
import { describe, expect, it } from 'vitest';
import { isWalletSignature, sep53Digest } from './wallet-signature.ts';

const ORDER_HASH = `0x${'ab'.repeat(32)}`;
const bytes = Buffer.from(ORDER_HASH.slice(2), 'hex');

/** What Freighter's `signMessage(text)` returns: SEP-53 over the UTF-8 text, base64. */
const freighterSign = (key: Keypair, text: string) => key.sign(sep53Digest(Buffer.from(text, 'utf8'))).toString('base64');

describe('wallet signatures over an order hash', () => {
  it('Stellar: takes SEP-53 over the raw 32 bytes and over the 0x hex text (Freighter), refuses another text', () => {
    const key = Keypair.random();
    expect(isWalletSignature('STELLAR', key.publicKey(), bytes, key.sign(sep53Digest(bytes)).toString('base64'))).toBe(true);
    expect(isWalletSignature('STELLAR', key.publicKey(), bytes, freighterSign(key, ORDER_HASH))).toBe(true);
    expect(isWalletSignature('STELLAR', key.publicKey(), bytes, freighterSign(key, ORDER_HASH.toUpperCase()))).toBe(false);
    expect(isWalletSignature('STELLAR', key.publicKey(), bytes, freighterSign(Keypair.random(), ORDER_HASH))).toBe(false);
  });

  it('EVM: takes personal_sign over the raw bytes and over the 0x hex text, refuses another text', async () => {
    const wallet = Wallet.createRandom();
    expect(isWalletSignature('EVM', wallet.address, bytes, await wallet.signMessage(bytes))).toBe(true);
    expect(isWalletSignature('EVM', wallet.address, bytes, await wallet.signMessage(ORDER_HASH))).toBe(true);
    expect(isWalletSignature('EVM', wallet.address, bytes, await wallet.signMessage(`${ORDER_HASH} `))).toBe(false);
  });
});
