/**
 * Whether an event argument read from a chain equals what the service expects: as integers when
 * both read as numbers (hex or decimal, so 0x-padded and checksummed spellings agree), else as
 * strings ignoring case.
 */
export function sameArgValue(actual: string | undefined, expected: string | bigint): boolean {
  if (actual === undefined) return false;
  try {
    return BigInt(actual) === BigInt(expected);
  } catch {
    return actual.toLowerCase() === String(expected).toLowerCase();
  }
}
