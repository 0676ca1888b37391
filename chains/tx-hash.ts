import type { ChainKind } from '../domain/index.ts';
import { adapterOf } from './adapters.ts';

/**
 * A transaction hash in the one spelling the service stores and compares (its kind's adapter: EVM
 * `0x` + lower-case hex, Stellar lower-case hex without prefix). Undefined when `txHash` is not 32
 * bytes of hex (0x optional).
 */
export function canonicalTxHash(kind: ChainKind, txHash: string): string | undefined {
  return adapterOf(kind).canonicalTxHash(txHash);
}
