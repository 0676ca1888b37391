/** EIP-1559 fees of one transaction, in wei per gas. */
export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * The fees of a first transaction: the suggested tip, and a max fee of twice the latest base fee plus
 * the tip (room for six full blocks of base-fee growth), never above `cap`.
 */
export function initialFees(baseFee: bigint, tip: bigint, cap: bigint): Fees {
  const maxFeePerGas = min(2n * baseFee + tip, cap);
  return { maxFeePerGas, maxPriorityFeePerGas: min(tip, maxFeePerGas) };
}

/**
 * The fees of a replacement of `previous` (same nonce): what the market asks now, and at least 12.5 %
 * above both of `previous`'s fees (nodes refuse a replacement under 10 % more), never above `cap`.
 * Undefined when `previous` is at the cap already: nothing higher may be offered.
 */
export function replacementFees(previous: Fees, baseFee: bigint, tip: bigint, cap: bigint): Fees | undefined {
  if (previous.maxFeePerGas >= cap) return undefined;
  const bump = (value: bigint) => value + value / 8n + 1n;
  const maxPriorityFeePerGas = max(tip, bump(previous.maxPriorityFeePerGas));
  const maxFeePerGas = min(max(2n * baseFee + maxPriorityFeePerGas, bump(previous.maxFeePerGas)), cap);
  return { maxFeePerGas, maxPriorityFeePerGas: min(maxPriorityFeePerGas, maxFeePerGas) };
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);
