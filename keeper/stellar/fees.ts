/** The lowest inclusion fee per operation the network accepts (stroops). */
export const MIN_INCLUSION_FEE = 100n;

/**
 * The fee bump's inclusion fee over a queued transaction's: a fee-bump transaction replaces one still
 * in a validator's queue only when it offers at least ten times its fee per operation (stellar-core).
 */
const REPLACEMENT_MULTIPLIER = 10n;

/**
 * The inclusion fee per operation (stroops) of a first transaction whose Soroban resource fee is
 * `resourceFee`: what the network asks lately (at least the minimum), so that inclusion fee plus
 * resource fee stays within `cap`. Undefined when even the minimum would exceed the cap.
 */
export function initialInclusionFee(market: bigint, resourceFee: bigint, cap: bigint): bigint | undefined {
  const room = cap - resourceFee;
  if (room < MIN_INCLUSION_FEE) return undefined;
  return min(max(market, MIN_INCLUSION_FEE), room);
}

/**
 * The inclusion fee per operation (stroops) of a fee-bump transaction around an inner transaction
 * whose resource fee is `resourceFee`, after a transaction (inner or fee bump) that offered `previous`
 * per operation: ten times `previous` (or what the network asks, if more), capped so that the fee
 * bump's whole fee (two operations' worth: the fee bump counts as one more, plus the resource fee)
 * stays within `cap`. Undefined when nothing above `previous` fits under the cap.
 */
export function feeBumpInclusionFee(previous: bigint, market: bigint, resourceFee: bigint, cap: bigint): bigint | undefined {
  const ceiling = (cap - resourceFee) / 2n;
  if (ceiling <= previous) return undefined;
  return min(max(previous * REPLACEMENT_MULTIPLIER, market, MIN_INCLUSION_FEE), ceiling);
}

/** The whole fee (stroops) a fee bump offering `inclusionFee` per operation pays. */
export const feeBumpTotal = (inclusionFee: bigint, resourceFee: bigint): bigint => 2n * inclusionFee + resourceFee;

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (...values: bigint[]) => values.reduce((a, b) => (a > b ? a : b));
