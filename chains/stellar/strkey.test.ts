import { StrKey } from '@stellar/stellar-sdk';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../test/support/seeded-random.ts';
import { addressToBytes32, isStellarAccount, isStellarContract } from '../address.ts';
import { decodeStrKey32 } from './strkey.ts';

/**
 * chains/stellar/strkey.ts (browser-safe, used by chains/address.ts) against the Stellar SDK's
 * StrKey it replaced: the same strings accepted, the same 32 bytes under them.
 */
const SEED = 20261124;
const random = seededRandom(SEED);
const bytes = (n: number) => Uint8Array.from({ length: n }, () => Math.floor(random() * 256));
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** A valid strkey with one change a typo, a wrong kind or a sloppy copy makes. */
function corrupted(valid: string): string {
  const at = Math.floor(random() * valid.length);
  switch (pick(['char', 'lower', 'short', 'long', 'padding', 'foreign'] as const)) {
    case 'char': return valid.slice(0, at) + pick([...'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'].filter((c) => c !== valid[at])) + valid.slice(at + 1);
    case 'lower': return valid.slice(0, at) + valid[at]!.toLowerCase() + valid.slice(at + 1);
    case 'short': return valid.slice(0, -1);
    case 'long': return `${valid}A`;
    case 'padding': return `${valid.slice(0, -1)}=`;
    case 'foreign': return valid.slice(0, at) + pick(['0', '1', '8', '9', ' ', 'é']) + valid.slice(at + 1);
  }
}

describe(`strkey decoding without the Stellar SDK (seed ${SEED})`, () => {
  const accounts = Array.from({ length: 200 }, () => StrKey.encodeEd25519PublicKey(Buffer.from(bytes(32))));
  const contracts = Array.from({ length: 200 }, () => StrKey.encodeContract(Buffer.from(bytes(32))));

  it('decodes every account and contract strkey to the bytes the SDK decodes, and each only as its own kind', () => {
    for (const account of accounts) {
      expect(decodeStrKey32('account', account)).toEqual(new Uint8Array(StrKey.decodeEd25519PublicKey(account)));
      expect(decodeStrKey32('contract', account)).toBeUndefined();
      expect(addressToBytes32(account)).toBe(`0x${StrKey.decodeEd25519PublicKey(account).toString('hex')}`);
    }
    for (const contract of contracts) {
      expect(decodeStrKey32('contract', contract)).toEqual(new Uint8Array(StrKey.decodeContract(contract)));
      expect(decodeStrKey32('account', contract)).toBeUndefined();
      expect(addressToBytes32(contract)).toBe(`0x${StrKey.decodeContract(contract).toString('hex')}`);
    }
  });

  it('accepts exactly the damaged strings the SDK accepts (none but a changed character that keeps the checksum)', () => {
    for (const valid of [...accounts, ...contracts]) {
      for (let i = 0; i < 10; i++) {
        const candidate = corrupted(valid);
        expect(isStellarAccount(candidate), candidate).toBe(StrKey.isValidEd25519PublicKey(candidate));
        expect(isStellarContract(candidate), candidate).toBe(StrKey.isValidContract(candidate));
      }
    }
    for (const other of ['', 'G', StrKey.encodeEd25519SecretSeed(Buffer.from(bytes(32))), StrKey.encodeSha256Hash(Buffer.from(bytes(32)))]) {
      expect(isStellarAccount(other)).toBe(false);
      expect(isStellarContract(other)).toBe(false);
    }
  });
});
