import { hash, Keypair, xdr } from '@stellar/stellar-sdk';
import { describe, expect, it } from 'vitest';
import { freighterWallet, keypairWallet, type FreighterLike } from './execute.js';

/**
 * The Stellar wallet adapters of ./execute as a fee payer's trade uses them: the Bridger's
 * authorisation entries signed the way Freighter's `signAuthEntry` signs (ed25519 over SHA-256 of
 * the entry's preimage XDR), by a key held here or through a Freighter-like API in either of its
 * answer shapes.
 */

const PASSPHRASE = 'Standalone Network ; February 2017';

/** A real HashIdPreimage (an operation id's: the simplest to build), as base64 XDR. */
function preimage(source: Keypair): string {
  return xdr.HashIdPreimage.envelopeTypeOpId(new xdr.HashIdPreimageOperationId({
    sourceAccount: source.xdrAccountId(), seqNum: xdr.Int64.fromString('7'), opNum: 0,
  })).toXDR('base64');
}

const digest = (preimageXdr: string) => hash(Buffer.from(preimageXdr, 'base64'));

/** Freighter's API over `key`, answering `shape` (API v4+: base64; older: the signature's bytes; a decline: null). */
function freighterOver(key: Keypair, shape: 'base64' | 'bytes' | 'null'): FreighterLike {
  return {
    signTransaction: async () => { throw new Error('not asked here'); },
    signMessage: async () => { throw new Error('not asked here'); },
    async signAuthEntry(preimageXdr, options) {
      expect(options).toEqual({ networkPassphrase: PASSPHRASE, address: key.publicKey() });
      const signature = key.sign(digest(preimageXdr));
      if (shape === 'null') return { signedAuthEntry: null };
      return { signedAuthEntry: shape === 'bytes' ? new Uint8Array(signature) : signature.toString('base64') };
    },
  };
}

describe('the Stellar wallet adapters\' authorisation-entry signatures', () => {
  it('keypairWallet signs SHA-256 of the preimage\'s XDR with its key, as Freighter does (base64)', async () => {
    const key = Keypair.random();
    const entry = preimage(Keypair.random());
    const signature = await keypairWallet(key).signAuthEntry!(entry, { networkPassphrase: PASSPHRASE });
    expect(key.verify(digest(entry), Buffer.from(signature, 'base64'))).toBe(true);
  });

  it('freighterWallet passes the network and the account, and answers base64 whether Freighter gives base64 or bytes', async () => {
    const key = Keypair.random();
    const entry = preimage(key);
    for (const shape of ['base64', 'bytes'] as const) {
      const signature = await freighterWallet(freighterOver(key, shape), key.publicKey()).signAuthEntry!(entry, { networkPassphrase: PASSPHRASE });
      expect(key.verify(digest(entry), Buffer.from(signature, 'base64'))).toBe(true);
    }
  });

  it('freighterWallet says a signature Freighter did not give, and has no signAuthEntry over an API without one', async () => {
    const key = Keypair.random();
    await expect(freighterWallet(freighterOver(key, 'null'), key.publicKey()).signAuthEntry!(preimage(key), { networkPassphrase: PASSPHRASE }))
      .rejects.toThrow('the wallet signed nothing');
    const { signAuthEntry: _left, ...withoutIt } = freighterOver(key, 'base64');
    expect(freighterWallet(withoutIt, key.publicKey()).signAuthEntry).toBeUndefined();
  });
});
