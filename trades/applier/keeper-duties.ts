import type { Knex } from 'knex';
import { cancelKeeperSendsNoLongerOwed, recordOwedKeeperSends } from '../../db/repositories/keeper-owed.ts';
import type { TradeLifecycleRecord } from '../../db/repositories/trade-lifecycle.ts';
import { keeperStillOwes, keeperWindow, type KeeperAction, type TradeCommand, type TradeState, type UnlockSide } from '../lifecycle/index.ts';

/**
 * The machine's SEND commands written to the keeper's outbox in the trade's own transaction (so a
 * duty is never lost between the decision and the sender), each with its window on its chain; and
 * every duty of the trade the new state no longer owes (a party sent it, the trade moved on)
 * dropped before it is signed.
 */
export async function recordKeeperDuties(
  trx: Knex.Transaction,
  trade: Pick<TradeLifecycleRecord, 'id' | 'adChainId' | 'orderChainId' | 'orderParams'>,
  commands: readonly TradeCommand[],
  state: TradeState,
): Promise<void> {
  const owed = commands.flatMap((command) => (command.type === 'SEND' ? [command] : [])).map((duty) => ({
    tradeId: trade.id, chainId: duty.side === 'ad' ? trade.adChainId : trade.orderChainId, action: duty.action, side: duty.side,
    ...keeperWindow(duty, trade.orderParams),
  }));
  await recordOwedKeeperSends(trx, owed);
  await cancelKeeperSendsNoLongerOwed(trx, trade.id, (duty) => keeperStillOwes(state, { action: duty.action as KeeperAction, side: duty.side as UnlockSide }));
}
