import { createHash } from 'node:crypto';
import { Keypair } from '@stellar/stellar-sdk';
import { getBytes, verifyMessage } from 'ethers';
import type { ChainKind } from '../domain/index.ts';

const SEP53_PREFIX = 'Stellar Signed Message:\n';

/**
 * True when `signature` is `address`'s wallet signature over `message`: EIP-191 `personal_sign` on
 * EVM (65 bytes, 0x hex), SEP-53 message signing on Stellar (ed25519 over
 * sha256("Stellar Signed Message:\n" || message); 64 bytes as 0x hex or base64). Either over the raw
 * bytes or over their lowercase `0x` hex as UTF-8 text: a wallet that signs strings only (Freighter's
 * `signMessage`, a wallet that does not read `0x` as bytes) signs the hex text it is shown. Never
 * throws on malformed input: it is simply not a valid signature.
 */
export function isWalletSignature(kind: ChainKind, address: string, message: Uint8Array, signature: string): boolean {
  const asText = new TextEncoder().encode(`0x${Buffer.from(message).toString('hex')}`);
  return signsBytes(kind, address, message, signature) || signsBytes(kind, address, asText, signature);
}

function signsBytes(kind: ChainKind, address: string, message: Uint8Array, signature: string): boolean {
  try {
    if (kind === 'EVM') return verifyMessage(message, signature).toLowerCase() === address.toLowerCase();
    const bytes = /^0x[0-9a-fA-F]{128}$/.test(signature) ? getBytes(signature) : Buffer.from(signature, 'base64');
    if (bytes.length !== 64) return false;
    return Keypair.fromPublicKey(address).verify(sep53Digest(message), Buffer.from(bytes));
  } catch {
    return false;
  }
}

/** SEP-53: what a Stellar wallet signs for `message`, for clients and tests. */
export function sep53Digest(message: Uint8Array): Buffer {
  return createHash('sha256').update(Buffer.concat([Buffer.from(SEP53_PREFIX), Buffer.from(message)])).digest();
}
