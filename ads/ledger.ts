import { InsufficientLiquidityError } from './errors.ts';

/**
 * The ad ledger: every way an ad's balances may change, as named operations on pure values. It is
 * the one place balances change (use cases hand its result to `changeLockedAd`, which writes it
 * under the ad row lock), and every operation keeps the invariant
 *
 *   pool = available + reserved + locked + withdrawing + paidOut,  every term >= 0
 *
 * where `pool` is everything ever funded, `reserved` is held for trades awaiting their lock,
 * `locked` is locked on chain for trades, `withdrawing` is held by withdraw and close requests
 * not yet confirmed or expired, `paidOut` is what left the ad (withdrawals, the close payout,
 * unlocks paid to Bridgers) and `available` is what is left to trade or withdraw.
 */
export interface AdBalances {
  pool: bigint;
  reserved: bigint;
  locked: bigint;
  withdrawing: bigint;
  paidOut: bigint;
}

export type LedgerOperation =
  /** A confirmed create or fund: the pool grows by what the chain says arrived. */
  | { op: 'fund'; amount: bigint }
  /** A trade is created: available -> reserved. */
  | { op: 'reserve'; amount: bigint }
  /** A trade expired (reservation or lock window): reserved -> available. */
  | { op: 'release'; amount: bigint }
  /** A trade's lock is confirmed: reserved -> locked. */
  | { op: 'lock'; amount: bigint }
  /** A trade's ad-side unlock is confirmed (the Bridger is paid): locked -> paid out. */
  | { op: 'payOut'; amount: bigint }
  /** A trade's lock was released on chain after lockExpiry (never unlocked): locked -> available. */
  | { op: 'returnLock'; amount: bigint }
  /** A withdraw or close request is signed: available -> withdrawing, so no trade can reserve it. */
  | { op: 'hold'; amount: bigint }
  /** A withdraw or close request expired unconfirmed: withdrawing -> available. */
  | { op: 'free'; amount: bigint }
  /** A withdraw is confirmed: its hold is given up and what the chain paid leaves the ad. */
  | { op: 'withdraw'; amount: bigint; held: bigint }
  /** A close is confirmed: everything not locked for trades (available and held) leaves the ad. */
  | { op: 'close' };

/** An operation that would break the invariant: a bug in the caller (the database's CHECKs would refuse it too). */
export class LedgerInvariantError extends Error {
  constructor(operation: LedgerOperation, balances: AdBalances) {
    super(`ledger: ${describe(operation)} does not fit the balances ${describeBalances(balances)}`);
    this.name = 'LedgerInvariantError';
  }
}

export const ZERO_BALANCES: AdBalances = { pool: 0n, reserved: 0n, locked: 0n, withdrawing: 0n, paidOut: 0n };

/** What is left to trade or withdraw. */
export function available(b: AdBalances): bigint {
  return b.pool - b.reserved - b.locked - b.withdrawing - b.paidOut;
}

/** The balances of a stored ad (its decimal-string columns). */
export function balancesOf(
  ad: {
    poolAmount: string;
    reservedAmount: string;
    lockedAmount: string;
    withdrawingAmount: string;
    paidOutAmount: string;
  },
): AdBalances {
  return {
    pool: BigInt(ad.poolAmount), reserved: BigInt(ad.reservedAmount), locked: BigInt(ad.lockedAmount),
    withdrawing: BigInt(ad.withdrawingAmount), paidOut: BigInt(ad.paidOutAmount),
  };
}

/**
 * The balances after `operation`. Reserving or holding more than is available throws
 * `InsufficientLiquidityError` (a conflict the caller may meet: 409); any other operation that
 * does not fit throws `LedgerInvariantError`. Amounts must be positive (`close` takes none).
 */
export function applyOperation(b: AdBalances, operation: LedgerOperation): AdBalances {
  if (operation.op !== 'close' && (operation.amount < 0n || (operation.op === 'withdraw' && operation.held < 0n))) {
    throw new LedgerInvariantError(operation, b);
  }
  const next = move(b, operation);
  if (available(next) < 0n && (operation.op === 'reserve' || operation.op === 'hold')) {
    throw new InsufficientLiquidityError(`${operation.amount} exceeds the available balance ${available(b)}`);
  }
  if (!fits(next)) throw new LedgerInvariantError(operation, b);
  return next;
}

/** The balances after every operation in turn. */
export function applyOperations(b: AdBalances, operations: readonly LedgerOperation[]): AdBalances {
  return operations.reduce(applyOperation, b);
}

/** True when every term is non-negative (the invariant's sum holds by construction of `available`). */
export function fits(b: AdBalances): boolean {
  return b.pool >= 0n && b.reserved >= 0n && b.locked >= 0n && b.withdrawing >= 0n && b.paidOut >= 0n && available(b) >= 0n;
}

function move(b: AdBalances, operation: LedgerOperation): AdBalances {
  switch (operation.op) {
    case 'fund': return { ...b, pool: b.pool + operation.amount };
    case 'reserve': return { ...b, reserved: b.reserved + operation.amount };
    case 'release': return { ...b, reserved: b.reserved - operation.amount };
    case 'lock': return { ...b, reserved: b.reserved - operation.amount, locked: b.locked + operation.amount };
    case 'payOut': return { ...b, locked: b.locked - operation.amount, paidOut: b.paidOut + operation.amount };
    case 'returnLock': return { ...b, locked: b.locked - operation.amount };
    case 'hold': return { ...b, withdrawing: b.withdrawing + operation.amount };
    case 'free': return { ...b, withdrawing: b.withdrawing - operation.amount };
    case 'withdraw': return { ...b, withdrawing: b.withdrawing - operation.held, paidOut: b.paidOut + operation.amount };
    // On chain only the locked balance stays in a closed ad: everything else is paid out, including
    // any withdrawal sent but never confirmed here.
    case 'close': return { ...b, withdrawing: 0n, paidOut: b.paidOut + available(b) + b.withdrawing };
  }
}

function describe(operation: LedgerOperation): string {
  if (operation.op === 'close') return 'close';
  if (operation.op === 'withdraw') return `withdraw ${operation.amount} (held ${operation.held})`;
  return `${operation.op} ${operation.amount}`;
}

function describeBalances(b: AdBalances): string {
  return `pool ${b.pool}, reserved ${b.reserved}, locked ${b.locked}, withdrawing ${b.withdrawing}, paid out ${b.paidOut}`;
}
