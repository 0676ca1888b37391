import type { Knex } from 'knex';
import { applyTradeOperations } from '../../ads/port.ts';
import { ChainEventTakenError, recordChainEvent } from '../../db/repositories/chain-events.ts';
import { appendPushedEvents } from '../../db/repositories/pushed-events.ts';
import { appendFollowUps } from '../../db/repositories/trade-follow-ups.ts';
import { lockTrade, saveTradeState, type StateExtras, type StoredProof, type TradeLifecycleRecord } from '../../db/repositories/trade-lifecycle.ts';
import { leafOf } from '../../prover/commitments.ts';
import { TradeNotFoundError, TradeStateError, TradeTransactionMismatchError } from '../lifecycle/errors.ts';
import { endOf, followUpsAfter, ledgerOperationsOf, movesAdBalances, stateOf, transition, type TradeEvent, type TradeState } from '../lifecycle/index.ts';
import type { AppliedEvent, ChainEventRef, FollowUpsWithin } from '../orchestrator.ts';
import { tradeEventsOf } from '../lifecycle/pushed-events.ts';
import { recordKeeperDuties } from './keeper-duties.ts';

/** What is written of one event beside the machine's state: its chain event, the proof, and whether the follow-ups travel with the result. */
export interface ApplyOptions {
  chainEvent?: ChainEventRef;
  /** The trade as the caller read it without a lock (a confirmation): not read again, written only if its state is unchanged. */
  read?: TradeLifecycleRecord;
  proof?: StoredProof;
  carriedOut?: boolean;
  /** The orchestrator carries the follow-ups out inside this transaction (unless `carriedOut`): their outbox rows are written carried out. */
  within?: FollowUpsWithin;
}

/**
 * Applies `event` to the stored trade in ONE database transaction: the trade read once (locked, or
 * as the caller read it and then written only if unchanged), the machine, the chain event, the
 * books, the state (with the leaf or the proof), the pushed events and the follow-ups outbox. A
 * trade that changed since the caller's read is locked, read and run through the machine again, as
 * is a caller's read the machine rejects (it may be behind). Throws `TradeNotFoundError`,
 * `TradeStateError` (the event does not apply), `TradeTransactionMismatchError` (the chain event
 * is another's).
 */
export async function applyEvent(knex: Knex, tradeId: string, event: TradeEvent, options: ApplyOptions = {}): Promise<AppliedEvent> {
  // A repeat is never applied to the caller's unlocked read: that read may predate the first
  // confirmation's commit (concurrent confirms of one transaction), so it goes to the locked row.
  if (options.read && !options.chainEvent?.recorded) {
    const read = options.read;
    const applied = await knex.transaction((trx) => applyTo(trx, read, event, options, true)).catch((error: unknown) => {
      if (error instanceof TradeStateError) return undefined;
      throw error;
    });
    if (applied) return applied;
  }
  return knex.transaction(async (trx) => {
    const trade = await lockTrade(trx, tradeId);
    if (!trade) throw new TradeNotFoundError(tradeId);
    return (await applyTo(trx, trade, event, options, false))!;
  });
}

/** What a stored trade's deadlines are, as the machine's follow-ups take them. */
export function deadlinesOf(trade: Pick<TradeLifecycleRecord, 'reservationExpiresAt' | 'lockDeadline'>) {
  return { reservationExpiresAt: trade.reservationExpiresAt.toISOString(), lockDeadline: trade.lockDeadline.toISOString() };
}

/** The machine applied to `trade` inside `trx`; undefined when `guarded` and the row's state is no longer the one read. */
async function applyTo(
  trx: Knex.Transaction,
  trade: TradeLifecycleRecord,
  event: TradeEvent,
  options: ApplyOptions,
  guarded: boolean,
): Promise<AppliedEvent | undefined> {
  const tradeId = trade.id;
  const { chainEvent } = options;
  const before = stateOf(trade);
  const result = transition(before, event);
  if (!result.ok) {
    // A repeat (or a stale timer) writes nothing: the follow-ups are the trade's end if it is over.
    if (result.duplicate) return { state: before, followUps: endOf(before), duplicate: true };
    if (result.stale) return { state: before, followUps: endOf(before), duplicate: false, stale: true };
    throw new TradeStateError(`trade ${tradeId}: ${result.reason}`);
  }
  const { state } = result;
  if (chainEvent?.recorded) throw new TradeStateError(`trade ${tradeId}: ${chainEvent.txHash} is recorded but the trade is ${before.status}`);
  const leaf = depositLeaf(trade, event, chainEvent);
  // First: the state write takes the row lock (or finds the row moved on: the caller reads it again).
  const stored = (s: TradeState) => ({ status: s.status, proofState: s.proof, bridgerClaimed: s.bridgerClaimed, adCreatorClaimed: s.adCreatorClaimed });
  const extras: StateExtras = { ...(leaf ? { leaf } : {}), ...(options.proof ? { proof: options.proof } : {}) };
  if (!(await saveTradeState(trx, tradeId, stored(state), extras, guarded ? stored(before) : undefined))) return undefined;
  if (chainEvent) {
    try {
      await recordChainEvent(trx, { ...chainEvent, subjectKind: 'trade', subjectId: tradeId });
    } catch (error) {
      if (error instanceof ChainEventTakenError) throw new TradeTransactionMismatchError(error.message);
      throw error;
    }
  }
  // The machine's ledger moves, in the ad token's units, through the ads port.
  if (movesAdBalances(result.commands)) {
    await applyTradeOperations(trx, trade.adId, (ad) => ledgerOperationsOf(result.commands, BigInt(trade.orderParams.adAmount), ad.closed));
  }
  await recordKeeperDuties(trx, trade, result.commands, state);
  // Published in the same transaction: nothing is announced that did not commit.
  await appendPushedEvents(trx, {
    tradeId, adId: trade.adId, recipients: [trade.adCreatorAddress, trade.bridgerAddress],
    events: tradeEventsOf({ tradeId, adId: trade.adId }, before, state, event),
  });
  const followUps = followUpsAfter(state, result.commands, deadlinesOf(trade));
  // Carried out here when the orchestrator's work is in this database: nothing is left for after the commit.
  const within = !options.carriedOut && options.within && followUps.length > 0 ? options.within : undefined;
  if (within) await within(trx, tradeId, followUps);
  const carried = options.carriedOut || within !== undefined;
  const outbox = await appendFollowUps(trx, tradeId, followUps, carried);
  return { state, followUps, duplicate: false, outbox: carried ? [] : outbox, ...(within ? { carriedWithin: true as const } : {}) };
}

/**
 * The deposit's leaf, ours to compute (the order hash and the commitment we issued), checked against
 * the one the chain event carries: a deposit whose leaf is not this order's is another's.
 */
function depositLeaf(trade: TradeLifecycleRecord, event: TradeEvent, chainEvent: ChainEventRef | undefined) {
  if (event.type !== 'DEPOSIT_CONFIRMED' || !chainEvent) return undefined;
  const leaf = { index: Number(chainEvent.args.leafIndex), leaf: leafOf(trade.orderHash, BigInt(trade.secretCommitment)).toString() };
  if (chainEvent.args.leaf !== undefined && BigInt(chainEvent.args.leaf) !== BigInt(leaf.leaf)) {
    throw new TradeTransactionMismatchError(`${chainEvent.txHash} deposited a leaf that is not this order's`);
  }
  return leaf;
}
