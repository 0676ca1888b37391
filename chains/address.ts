import { getAddress, hexlify, isAddress } from 'ethers';

import { UUID_PATTERN } from '../domain/index.ts';
import { decodeStrKey32 } from './stellar/strkey.ts';

// No Node built-in and no Stellar SDK here: the client package bundles this file for browsers
// (client/evm.js, through chains/evm/call-args.ts).

// Kept here too so chain callers find the vocabulary beside the address rules; defined in domain/.
export { CHAIN_KINDS, NATIVE_TOKEN_ADDRESS, type ChainKind } from '../domain/index.ts';

const EVM_HEX = /^0x[0-9a-fA-F]{40}$/;

/** True for a 0x-prefixed 20-byte hex address (any case; a mixed-case one must carry a valid EIP-55 checksum). */
export function isEvmAddress(value: string): boolean {
  return EVM_HEX.test(value) && isAddress(value);
}

/** True for a Stellar account (G...) strkey with a valid checksum. */
export function isStellarAccount(value: string): boolean {
  return decodeStrKey32('account', value) !== undefined;
}

/** True for a Stellar contract (C...) strkey with a valid checksum. */
export function isStellarContract(value: string): boolean {
  return decodeStrKey32('contract', value) !== undefined;
}

/**
 * Canonical form when the value is a valid address of either kind, else the value unchanged; for
 * filters, where an unknown address simply matches nothing.
 */
export function canonicalAddressLoose(value: string): string {
  if (isEvmAddress(value)) return getAddress(value);
  return value;
}

/** Raised when a value cannot be turned into the 32-byte form signed requests and order hashes use. */
export class AddressEncodingError extends Error {}


/**
 * The 32-byte value an address takes inside a signed request or the order struct, as 0x-prefixed
 * lower-case hex. EVM: the 20 address bytes left-padded with 12 zero bytes (`bytes32(uint256(uint160(a)))`).
 * Stellar: the 32 raw bytes under the strkey, the ed25519 public key of a G... account or the
 * contract hash of a C... contract. The kind is read from the format, so one order can name
 * addresses of both chains. A G and a C address with the same 32 bytes would need a SHA-256
 * preimage of an ed25519 key, so the missing kind tag costs nothing in practice.
 */
export function addressToBytes32(value: string): string {
  if (isEvmAddress(value)) return `0x${'0'.repeat(24)}${value.slice(2).toLowerCase()}`;
  const stellar = decodeStrKey32('account', value) ?? decodeStrKey32('contract', value);
  if (stellar) return hexlify(stellar);
  throw new AddressEncodingError(`expected an EVM address or a Stellar G.../C... strkey, received '${value}'`);
}

/** Inverse of `addressToBytes32` for an EVM address: throws when the 12 high bytes are not zero. */
export function bytes32ToEvmAddress(value: string): string {
  if (!/^0x0{24}[0-9a-fA-F]{40}$/.test(value)) {
    throw new AddressEncodingError(`not a left-padded EVM address: '${value}'`);
  }
  return getAddress(`0x${value.slice(26)}`);
}

/**
 * A UUID (the service's ad id) as a 32-byte value: its 16 bytes left-padded with 16 zero bytes,
 * i.e. `bytes32(uint256(uint128(uuid)))`. Any contract can compare it as an opaque key.
 */
export function uuidToBytes32(value: string): string {
  if (!UUID_PATTERN.test(value)) throw new AddressEncodingError(`expected a UUID, received '${value}'`);
  return `0x${'0'.repeat(32)}${value.replaceAll('-', '').toLowerCase()}`;
}
