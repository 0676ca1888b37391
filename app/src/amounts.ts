/** Token amounts as a person types and reads them, kept exact: bigint base units, never JS numbers. */

/**
 * `text` ("12.5") in base units of a token with `decimals`; throws a sentence naming the problem
 * (not a number, too many decimals, negative).
 */
export function parseAmount(text: string, decimals: number): bigint {
  const trimmed = text.trim();
  const match = /^(\d*)(?:\.(\d*))?$/.exec(trimmed);
  if (!trimmed || !match || (match[1] === '' && !match[2])) throw new Error(`"${text}" is not an amount: write digits, with a dot for decimals`);
  const fraction = match[2] ?? '';
  if (fraction.length > decimals) throw new Error(`"${text}" has more than ${decimals} decimals, this token's precision`);
  return BigInt((match[1] || '0') + fraction.padEnd(decimals, '0'));
}

/** `units` (base units, decimal string or bigint) as a decimal number of tokens, trailing zeros dropped. */
export function formatAmount(units: string | bigint, decimals: number): string {
  const value = BigInt(units);
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
