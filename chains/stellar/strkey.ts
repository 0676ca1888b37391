/**
 * The 32 raw bytes under a Stellar account (G...) or contract (C...) strkey, with no Node built-in
 * and no @stellar/stellar-sdk: chains/address.ts encodes addresses with it, and the client package
 * bundles that file for browsers (client/evm.js). Accepts exactly what the SDK's
 * `StrKey.isValidEd25519PublicKey` / `StrKey.isValidContract` accept (chains/stellar/strkey.test.ts
 * holds them side by side): 56 upper-case RFC 4648 base32 characters (35 bytes, no padding) of
 * version byte ‖ 32-byte payload ‖ CRC16-XModem of both, little-endian.
 */

/** Version bytes of the two kinds (`6 << 3` reads as G, `2 << 3` as C). */
const VERSION_BYTE = { account: 6 << 3, contract: 2 << 3 } as const;

export type StrKeyKind = keyof typeof VERSION_BYTE;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const STRKEY_32 = /^[A-Z2-7]{56}$/;

/** The payload of a valid strkey of `kind`, or undefined when `value` is not one. */
export function decodeStrKey32(kind: StrKeyKind, value: string): Uint8Array | undefined {
  if (typeof value !== 'string' || !STRKEY_32.test(value)) return undefined;
  const bytes = new Uint8Array(35);
  let buffer = 0;
  let bits = 0;
  let index = 0;
  for (const char of value) {
    buffer = ((buffer << 5) | ALPHABET.indexOf(char)) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes[index++] = (buffer >> bits) & 0xff;
    }
  }
  if (bytes[0] !== VERSION_BYTE[kind]) return undefined;
  const checksum = crc16XModem(bytes.subarray(0, 33));
  if (bytes[33] !== (checksum & 0xff) || bytes[34] !== checksum >> 8) return undefined;
  return bytes.slice(1, 33);
}

/** CRC16-XModem (polynomial 0x1021, initial 0), the strkey checksum. */
function crc16XModem(data: Uint8Array): number {
  let crc = 0;
  for (const byte of data) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}
