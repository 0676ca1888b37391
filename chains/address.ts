import { StrKey } from '@stellar/stellar-sdk';
import { getAddress, isAddress } from 'ethers';

export type ChainKind = 'EVM' | 'STELLAR';
export const CHAIN_KINDS = ['EVM', 'STELLAR'] as const;

/** The all-zero EVM address: how the spec writes a native token's address. */
export const NATIVE_TOKEN_ADDRESS = '0x0000000000000000000000000000000000000000';

const EVM_HEX = /^0x[0-9a-fA-F]{40}$/;

/** True for a 0x-prefixed 20-byte hex address (any case; a mixed-case one must carry a valid EIP-55 checksum). */
export function isEvmAddress(value: string): boolean {
  return EVM_HEX.test(value) && isAddress(value);
}

/** True for a Stellar account (G...) strkey with a valid checksum. */
export function isStellarAccount(value: string): boolean {
  return StrKey.isValidEd25519PublicKey(value);
}

/** True for a Stellar contract (C...) strkey with a valid checksum. */
export function isStellarContract(value: string): boolean {
  return StrKey.isValidContract(value);
}

/** A wallet address (who signs) of the given chain kind. */
export function isWalletAddress(kind: ChainKind, value: string): boolean {
  return kind === 'EVM' ? isEvmAddress(value) : isStellarAccount(value);
}

/** Any address that can hold or receive tokens on the chain kind: wallets, and contracts on Stellar. */
export function isRecipientAddress(kind: ChainKind, value: string): boolean {
  return kind === 'EVM' ? isEvmAddress(value) : isStellarAccount(value) || isStellarContract(value);
}

/**
 * The one spelling the service stores and compares: EIP-55 checksum for EVM, the strkey itself
 * (always upper case) for Stellar. Throws on an address that is not valid for the kind.
 */
export function canonicalAddress(kind: ChainKind, value: string): string {
  if (kind === 'EVM') {
    if (!isEvmAddress(value)) throw new Error(`not an EVM address: '${value}'`);
    return getAddress(value);
  }
  if (!isStellarAccount(value) && !isStellarContract(value)) throw new Error(`not a Stellar address: '${value}'`);
  return value;
}

/**
 * Canonical form when the value is a valid address of either kind, else the value unchanged; for
 * filters, where an unknown address simply matches nothing.
 */
export function canonicalAddressLoose(value: string): string {
  if (isEvmAddress(value)) return getAddress(value);
  return value;
}
