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

/** Names of the arguments that tie an event to one request of the service. */
export const BINDING_ARGS = ['reqHash', 'orderHash'] as const;

/**
 * Refuses (TypeError) expected arguments that bind the event to nothing: without the issued
 * `reqHash` or the order's `orderHash`, any event of the right name from the contract would do.
 */
export function assertBindingArgs(args: Record<string, string | bigint>): void {
  if (!BINDING_ARGS.some((name) => args[name] !== undefined && String(args[name]) !== '')) {
    throw new TypeError(`args must include reqHash or orderHash to bind the event to a request, received {${Object.keys(args).join(', ')}}`);
  }
}

/** Refuses (RangeError) a confirmation depth below 1: a depth of 0 would accept a pending transaction. */
export function assertConfirmations(confirmations: number): void {
  if (!Number.isSafeInteger(confirmations) || confirmations < 1) {
    throw new RangeError(`confirmations must be an integer of at least 1, received ${confirmations}`);
  }
}
