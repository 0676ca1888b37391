/**
 * The deposit circuit's public signals by name, in the circuit's order. Everything that reads a
 * proof's signals (the stored proof, the contracts' call data, tests) names them through here
 * instead of counting positions.
 */
export const PUBLIC_SIGNAL_NAMES = ['root', 'orderHashHi', 'orderHashLo', 'nullifierHash'] as const;

export type PublicSignalName = (typeof PUBLIC_SIGNAL_NAMES)[number];

/** A proof's public signals, each a decimal string, by name. */
export type PublicSignals = Record<PublicSignalName, string>;

/** The named signals of `signals` (the circuit's order). Throws `RangeError` when the count is not the circuit's. */
export function namePublicSignals(signals: readonly string[]): PublicSignals {
  if (signals.length !== PUBLIC_SIGNAL_NAMES.length) {
    throw new RangeError(`publicSignals must hold ${PUBLIC_SIGNAL_NAMES.length} values, received ${signals.length}`);
  }
  return Object.fromEntries(PUBLIC_SIGNAL_NAMES.map((name, i) => [name, signals[i]!])) as PublicSignals;
}

/** The signals in the circuit's order, as a verifier takes them. */
export function orderedPublicSignals(signals: PublicSignals): string[] {
  return PUBLIC_SIGNAL_NAMES.map((name) => signals[name]);
}
