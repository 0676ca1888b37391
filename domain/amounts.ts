/** Amounts are decimal strings of the token's smallest unit; they fit numeric(78,0) and a uint256 on chain. */
export const MAX_UINT256 = (1n << 256n) - 1n;

/** A non-negative decimal integer without sign, fraction or leading zeros. */
export const DECIMAL_INTEGER = /^(0|[1-9][0-9]*)$/;

/** True when `value` is a decimal string of an integer in 0..2^256-1. */
export function isAmount(value: unknown): value is string {
  return typeof value === 'string' && DECIMAL_INTEGER.test(value) && value.length <= 78 && BigInt(value) <= MAX_UINT256;
}
