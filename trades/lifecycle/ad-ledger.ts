import type { TradeCommand } from './machine.ts';

/**
 * What the machine's balance commands do to the ad's ledger (ads/ledger.ts applies them; the
 * operation names are its own), decided here so that the activity only writes them.
 */
export type AdLedgerMove = { op: 'release' | 'lock' | 'payOut' | 'returnLock'; amount: bigint };

/** The machine's commands that move an ad's balances. */
const BALANCE_COMMANDS: ReadonlySet<TradeCommand['type']> = new Set(['RELEASE_RESERVATION', 'RESERVATION_TO_LOCK', 'PAY_OUT_LOCK', 'RETURN_LOCK']);

/** Whether any of `commands` moves the ad's balances (the ad row is then locked and written). */
export function movesAdBalances(commands: readonly TradeCommand[]): boolean {
  return commands.some((command) => BALANCE_COMMANDS.has(command.type));
}

/**
 * The ad ledger's operations for the machine's balance commands on a trade whose ad side moves
 * `amount` (ad token units: the order's adAmount, not the deposit). A released lock goes back to
 * the ad, or, the ad being closed, to its Maker (the contract pays it out: AdManager.releaseLock,
 * Soroban `release_lock`), so it leaves the books as a pay-out.
 */
export function ledgerOperationsOf(commands: readonly TradeCommand[], amount: bigint, adClosed: boolean): AdLedgerMove[] {
  const operations: AdLedgerMove[] = [];
  for (const command of commands) {
    if (command.type === 'RELEASE_RESERVATION') operations.push({ op: 'release', amount });
    if (command.type === 'RESERVATION_TO_LOCK') operations.push({ op: 'lock', amount });
    if (command.type === 'PAY_OUT_LOCK') operations.push({ op: 'payOut', amount });
    if (command.type === 'RETURN_LOCK') operations.push({ op: adClosed ? 'payOut' : 'returnLock', amount });
  }
  return operations;
}
