import type { ChainKind } from '../domain/index.ts';

/**
 * A transaction hash in the one spelling the service stores and compares: EVM `0x` + lower-case hex,
 * Stellar lower-case hex without prefix. Undefined when `txHash` is not 32 bytes of hex (0x optional).
 */
export function canonicalTxHash(kind: ChainKind, txHash: string): string | undefined {
  const hex = txHash.replace(/^0x/i, '').toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hex)) return undefined;
  return kind === 'EVM' ? `0x${hex}` : hex;
}
