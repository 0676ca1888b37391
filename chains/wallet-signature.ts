import type { ChainKind } from '../domain/index.ts';
import { adapterOf } from './adapters.ts';

export { sep53Digest } from './stellar/adapter.ts';

/**
 * True when `signature` is `address`'s wallet signature over `message`, as its kind's wallets sign
 * messages: EIP-191 `personal_sign` on EVM (65 bytes, 0x hex), SEP-53 message signing on Stellar
 * (ed25519 over sha256("Stellar Signed Message:\n" || message); 64 bytes as 0x hex or base64). Either
 * over the raw bytes or over their lowercase `0x` hex as UTF-8 text: a wallet that signs strings only
 * (Freighter's `signMessage`, a wallet that does not read `0x` as bytes) signs the hex text it is
 * shown. Never throws on malformed input: it is simply not a valid signature.
 */
export function isWalletSignature(kind: ChainKind, address: string, message: Uint8Array, signature: string): boolean {
  return adapterOf(kind).isWalletSignature(address, message, signature);
}
