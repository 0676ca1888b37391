import type { Knex } from 'knex';
import { ChainVerificationError, NotFinalError, RpcUnavailableError } from '../chains/errors.ts';
import { canonicalTxHash } from '../chains/tx-hash.ts';
import type { TransactionVerifier, VerifiedAction } from '../chains/verify.ts';
import { applyTradeOperations } from '../ads/port.ts';
import { ChainEventTakenError, findSubjectEventsInTransactions, recordChainEvent } from '../db/repositories/chain-events.ts';
import type { ChainConnection, RegistryCache } from '../db/repositories/registry-cache.ts';
import {
  findTradeLifecycle, lockTrade, saveTradeState, type StateExtras, type StoredProof, type TradeLifecycleRecord,
} from '../db/repositories/trade-lifecycle.ts';
import { appendFollowUps } from '../db/repositories/trade-follow-ups.ts';
import { appendPushedEvents } from '../db/repositories/pushed-events.ts';
import { leafOf } from '../prover/commitments.ts';
import type { MerkleTreeStore, TreeKey } from '../prover/merkle/store.ts';
import type { ProverPool } from '../prover/pool.ts';
import { buildProofInput } from '../prover/proof-input.ts';
import { TradeNotFoundError, TradeStateError, TradeTransactionMismatchError } from './lifecycle/errors.ts';
import { syncOrderTree } from './tree-sync.ts';
import {
  LOCK_WINDOW_RECHECK_MAX_SECONDS, awaitedAction, chainFact, chainFactOf, eventOf, followUpsOf, isTerminal, ledgerOperationsOf, lockWindowReading,
  lockWindowVerdict, movesAdBalances, orderStateName, recordedAction, recordedActionFits, reservationExpiryVerdict, resume, stateOf, transition,
  type ChainFact, type DepositReading, type LockWindowReading, type TradeEvent,
} from './lifecycle/index.ts';
import { lockDeadline, searchStart } from '../chains/timing.ts';
import type { ChainStateReader } from '../chains/state.ts';
import type { Chains } from '../chains/chains.ts';
import { depositReading } from './reservation-expiry.ts';
import type { OrderChainReader } from '../chains/order-chain.ts';
import { tradeEventsOf } from './pushed-events.ts';
import type { AppliedEvent, ChainEventRef, OrderFacts, TradeActivities, TradeFollowUp, VerifiedConfirmation } from './orchestrator.ts';

export interface ActivityDeps {
  knex: Knex;
  registryCache: RegistryCache;
  verifier: TransactionVerifier;
  merkleStore: MerkleTreeStore;
  /** The proof pool (started on first use). */
  prover: () => ProverPool;
  /** The chains through their providers (the order chain's portal is read to fill tree gaps). */
  chains: Chains;
  /** Asks the order chain whether a deposit happened before its reservation is given back. */
  orderChainReader?: OrderChainReader;
  /**
   * Asks the ad chain, when a lock window's timer fires, whether the order is locked and what time
   * the chain has reached (`lockWindowOnChain`). Without it the window closes on this service's clock.
   */
  chainState?: ChainStateReader;
  /** SIGNED_REQUEST_TTL_SECONDS: bounds how far back a lock nobody reported is looked for. */
  signedRequestTtlSeconds?: number;
}

/** The machine's view of a stored trade (trades/lifecycle/ `stateOf`). */
export { stateOf };

/**
 * The lifecycle steps both orchestrators run, each idempotent on (trade, step): verification of a
 * reported transaction, one database transaction per machine event, and the proof.
 */
export function createActivities(deps: ActivityDeps): TradeActivities {
  const { knex } = deps;

  async function chain(chainId: string): Promise<ChainConnection & { rpcUrl: string }> {
    const found = await deps.registryCache.chain(chainId);
    if (!found?.rpcUrl) throw new RpcUnavailableError(`chain ${chainId} has no RPC URL registered`);
    return found as ChainConnection & { rpcUrl: string };
  }

  /**
   * The step's event for this order in `txHash`, on the step's contract (its row of
   * trades/lifecycle/chain-facts.ts). Events that move money must move the order's amount the row
   * names (the contract moves what the hashed order says; checked anyway).
   */
  async function verifyOn(target: ChainConnection & { rpcUrl: string }, fact: ChainFact, txHash: string, order: OrderFacts): Promise<VerifiedAction> {
    const args: Record<string, string> = { orderHash: order.orderHash };
    if (fact.amount) args.amount = order[fact.amount];
    const contractAddress = fact.contract === 'AdManager' ? order.adManager : order.orderPortal;
    return deps.verifier.verify(
      target,
      { txHash: normalizeTxHash(target, txHash), contractAddress, action: fact.name, args },
    );
  }

  const toRef = (v: VerifiedAction): ChainEventRef => ({
    chainId: v.chainId, txHash: v.txHash, logIndex: v.logIndex, block: v.block, blockHash: v.blockHash, event: v.event, args: v.args,
  });

  /** What is written of one event beside the machine's state: its chain event, the proof, and whether the follow-ups travel with the result. */
  interface ApplyOptions {
    chainEvent?: ChainEventRef;
    /** The trade as the caller read it without a lock (a confirmation): not read again, written only if its state is unchanged. */
    read?: TradeLifecycleRecord;
    proof?: StoredProof;
    carriedOut?: boolean;
  }

  /**
   * Applies `event` to the stored trade in ONE database transaction (architecture.md "One machine,
   * one transaction"): the trade read once (locked, or as the caller read it and then written only
   * if unchanged), the machine, the chain event, the books, the state (with the leaf or the proof),
   * the pushed events and the follow-ups outbox. A trade that changed since the caller's read is
   * locked, read and run through the machine again, as is a caller's read the machine rejects (it
   * may be behind).
   */
  async function applyInTransaction(tradeId: string, event: TradeEvent, options: ApplyOptions = {}): Promise<AppliedEvent> {
    // A repeat is never applied to the caller's unlocked read: that read may predate the first
    // confirmation's commit (concurrent confirms of one transaction), so it goes to the locked row.
    if (options.read && !options.chainEvent?.recorded) {
      const applied = await knex.transaction((trx) => applyTo(trx, options.read!, event, options, true)).catch((error: unknown) => {
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
      const ended: TradeFollowUp[] = isTerminal(before) ? [{ type: 'END' }] : [];
      if (result.duplicate) return { state: before, followUps: ended, duplicate: true };
      if (result.stale) return { state: before, followUps: ended, duplicate: false, stale: true };
      throw new TradeStateError(`trade ${tradeId}: ${result.reason}`);
    }
    const { state } = result;
    // The deposit's leaf is ours to compute: the order hash and the commitment we issued.
    if (chainEvent?.recorded) throw new TradeStateError(`trade ${tradeId}: ${chainEvent.txHash} is recorded but the trade is ${before.status}`);
    const leaf = event.type === 'DEPOSIT_CONFIRMED' && chainEvent
      ? { index: Number(chainEvent.args.leafIndex), leaf: leafOf(trade.orderHash, BigInt(trade.secretCommitment)).toString() }
      : undefined;
    if (leaf && chainEvent?.args.leaf !== undefined && BigInt(chainEvent.args.leaf) !== BigInt(leaf.leaf)) {
      throw new TradeTransactionMismatchError(`${chainEvent.txHash} deposited a leaf that is not this order's`);
    }
    // First: the state write takes the row lock (or finds the row moved on: the caller reads it again).
    const stored = (s: typeof state) => ({ status: s.status, proofState: s.proof, bridgerClaimed: s.bridgerClaimed, adCreatorClaimed: s.adCreatorClaimed });
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
    // The machine's ledger moves (trades/lifecycle/ad-ledger.ts), in the ad token's units, through the ads port.
    if (movesAdBalances(result.commands)) {
      await applyTradeOperations(trx, trade.adId, (ad) => ledgerOperationsOf(result.commands, BigInt(trade.orderParams.adAmount), ad.closed));
    }
    // Published in the same transaction: nothing is announced that did not commit (architecture.md "Pushed status").
    await appendPushedEvents(trx, {
      tradeId, adId: trade.adId, recipients: [trade.adCreatorAddress, trade.bridgerAddress],
      events: tradeEventsOf({ tradeId, adId: trade.adId }, before, state, event),
    });
    const deadlines = { reservationExpiresAt: trade.reservationExpiresAt.toISOString(), lockDeadline: trade.lockDeadline.toISOString() };
    const followUps: TradeFollowUp[] = [...followUpsOf(result.commands, deadlines), ...(isTerminal(state) ? [{ type: 'END' as const }] : [])];
    const outbox = await appendFollowUps(trx, tradeId, followUps, options.carriedOut);
    return { state, followUps, duplicate: false, outbox: options.carriedOut ? [] : outbox };
  }

  /**
   * The lock window's timer decided by the ad chain (lifecycle.ts `lockWindowVerdict`), or
   * undefined to let the machine apply LOCK_WINDOW_CLOSED (the window closed with no lock, the
   * chain cannot be asked, or the trade is no longer DEPOSITED: then the timer is stale). The
   * chain's time is read before the order's state: once a final block is stamped past the lock
   * deadline, any lock is in an earlier block, so the state read after it shows it. A lock on chain
   * is delivered as LOCK_CONFIRMED with its verified OrderLocked event (found by order hash); a lock
   * whose event cannot be found, verified or is not final yet keeps the trade DEPOSITED and the
   * window is looked at again (the audit reports it if it stays so). An ad chain that does not
   * answer throws `RpcUnavailableError`: the timer is retried, nothing expires on a guess.
   */
  async function lockWindowOnChain(tradeId: string, chainState: ChainStateReader, carriedOut?: boolean): Promise<AppliedEvent | undefined> {
    const trade = await findTradeLifecycle(knex, tradeId);
    if (!trade) throw new TradeNotFoundError(tradeId);
    const state = stateOf(trade);
    if (state.status !== 'DEPOSITED') return undefined;
    // Not `chain()`: a chain with no RPC URL is one this service cannot ask (as for a reservation), not an outage to retry.
    const registered = await deps.registryCache.chain(trade.adChainId);
    const adChain = registered?.rpcUrl ? { ...registered, rpcUrl: registered.rpcUrl } : undefined;
    const adManager = trade.orderParams.adManager;
    let reading: LockWindowReading = { readable: false };
    if (adChain) {
      const chainTime = await chainState.finalTime(adChain);
      const orderState = chainTime === undefined ? undefined : await chainState.orderState(adChain, adManager, trade.orderHash);
      if (chainTime === undefined || orderState === undefined) {
        throw new RpcUnavailableError(`chain ${adChain.chainId} cannot be read: the lock window of trade ${tradeId} is decided later`);
      }
      reading = lockWindowReading(orderStateName('AdManager', orderState), chainTime);
    }
    const verdict = lockWindowVerdict(state, reading, BigInt(lockDeadline(trade.orderParams)));
    const later = (seconds: number): AppliedEvent => ({
      state, duplicate: false, stale: true,
      followUps: [{ type: 'ARM_TIMER', event: 'LOCK_WINDOW_CLOSED', at: new Date(Date.now() + seconds * 1000).toISOString(), again: true }],
    });
    if (verdict.do === 'close') return undefined;
    if (verdict.do === 'wait') return later(verdict.seconds);
    const since = searchStart(trade.reservationExpiresAt, deps.signedRequestTtlSeconds ?? 86_400);
    const lock = chainFact('lock');
    const txHash = await chainState.findEventTransaction(adChain!, { contractAddress: adManager, event: lock.event, topics: { key: trade.orderHash }, since });
    if (!txHash) return later(LOCK_WINDOW_RECHECK_MAX_SECONDS);
    let verified: VerifiedAction;
    try {
      verified = await verifyOn(adChain!, lock, txHash, {
        orderHash: trade.orderHash, adChainId: trade.adChainId, orderChainId: trade.orderChainId, adManager, orderPortal: trade.orderParams.orderPortal,
        orderAmount: trade.orderParams.orderAmount, adAmount: trade.orderParams.adAmount,
      });
    } catch (error) {
      if (error instanceof RpcUnavailableError) throw error;
      if (error instanceof ChainVerificationError) return later(LOCK_WINDOW_RECHECK_MAX_SECONDS);
      throw error;
    }
    return { ...(await applyInTransaction(tradeId, lock.machineEvent, { chainEvent: toRef(verified), carriedOut })), appliedAs: lock.machineEvent };
  }

  return {
    async verifyConfirmation({ tradeId, confirmation, state, order }): Promise<VerifiedConfirmation> {
      const chains = { ad: await chain(order.adChainId), order: await chain(order.orderChainId) };

      // A transaction may carry events of several subjects (a batching contract, a smart account):
      // what matters is whether THIS trade's event in it is recorded, and whether it is of the kind
      // the endpoint takes (lifecycle.ts `recordedActionFits`): then it is a repeat (the machine
      // reports a duplicate). Another subject's event in the same transaction says nothing about
      // this trade; the chain is asked below.
      let otherKind: string | undefined;
      const sides = (['order', 'ad'] as const).map((side) => ({
        side,
        chainId: chains[side].chainId,
        txHash: normalizeTxHash(chains[side], confirmation.txHash),
      }));
      // Both sides in one query: the transaction may be on either chain.
      const recordedOnEither = await findSubjectEventsInTransactions(knex, 'trade', tradeId, sides);
      for (const { side, chainId, txHash } of sides) {
        const recorded = recordedOnEither.filter((event) => event.chainId === chainId && event.txHash === txHash);
        for (const event of recorded) {
          const action = recordedAction(event.event, side);
          if (!action) continue;
          if (!recordedActionFits(action.name, confirmation.kind)) {
            otherKind ??= event.event;
            continue;
          }
          const { subjectKind: _kind, subjectId: _id, ...ref } = event;
          return { event: eventOf(action), chainEvent: { ...ref, args: {}, recorded: true } };
        }
      }
      // This trade's deposit or lock sent to /unlock/confirm, or its unlock to /confirm.
      const wrongKind = () => new TradeTransactionMismatchError(
        `${confirmation.txHash} is this trade's ${otherKind}, not ${confirmation.kind === 'unlock' ? 'an unlock' : 'a deposit or a lock'}`,
      );

      const awaited = awaitedAction(state, confirmation.kind);
      if (!awaited.ok) {
        if (otherKind) throw wrongKind();
        throw new TradeStateError(`trade ${tradeId}: ${awaited.reason}`);
      }
      const fact = chainFactOf(awaited.action);
      try {
        const verified = await verifyOn(chains[fact.side], fact, confirmation.txHash, order);
        return { event: fact.machineEvent, chainEvent: toRef(verified) };
      } catch (error) {
        const refusedByChain = error instanceof ChainVerificationError && !(error instanceof NotFinalError || error instanceof RpcUnavailableError);
        if (otherKind && refusedByChain) throw wrongKind();
        throw error;
      }
    },

    async applyEvent({ tradeId, event, chainEvent, read, carriedOut }): Promise<AppliedEvent> {
      if (event.type === 'LOCK_WINDOW_CLOSED' && deps.chainState) {
        const decided = await lockWindowOnChain(tradeId, deps.chainState, carriedOut);
        if (decided) return decided;
      }
      if (event.type === 'RESERVATION_EXPIRED' && deps.orderChainReader) {
        const trade = read ?? (await findTradeLifecycle(knex, tradeId));
        if (!trade) throw new TradeNotFoundError(tradeId);
        // Not `chain()`: a chain with no RPC URL is one this service cannot ask (the reader says null), not an outage to retry.
        const orderChain = await deps.registryCache.chain(trade.orderChainId);
        const reading: DepositReading = orderChain ? await depositReading(deps.orderChainReader, orderChain, trade) : { readable: false };
        // The deposit happened (confirmed or not): the reservation stays, the timer is stale (trades/lifecycle/expiry-veto.ts).
        if (reservationExpiryVerdict(stateOf(trade), reading).do === 'keep') {
          return { state: stateOf(trade), followUps: [], duplicate: false, stale: true };
        }
        return applyInTransaction(tradeId, event, { read: trade, carriedOut });
      }
      return applyInTransaction(tradeId, event, { chainEvent, read, carriedOut });
    },

    async generateProof({ tradeId, carriedOut }): Promise<AppliedEvent> {
      const trade = await findTradeLifecycle(knex, tradeId);
      if (!trade) throw new TradeNotFoundError(tradeId);
      if (trade.proof) {
        // Proved and applied before (a retried or duplicated job, or a result lost on its way back): what the trade's state still needs.
        const state = stateOf(trade);
        const deadlines = { reservationExpiresAt: trade.reservationExpiresAt.toISOString(), lockDeadline: trade.lockDeadline.toISOString() };
        return { state, followUps: [...followUpsOf(resume(state), deadlines), ...(isTerminal(state) ? [{ type: 'END' as const }] : [])], duplicate: true };
      }
      if (trade.leafIndex === null || trade.leaf === null) throw new TradeStateError(`trade ${tradeId} has no confirmed deposit to prove`);
      const orderChain = await chain(trade.orderChainId);
      const key: TreeKey = { chainId: orderChain.chainId, portalAddress: trade.orderParams.orderPortal };
      await deps.merkleStore.insertLeaf(key, trade.leafIndex, BigInt(trade.leaf));
      await syncOrderTree({ store: deps.merkleStore, key, chain: orderChain, chains: deps.chains });
      const path = await deps.merkleStore.getPath(key, trade.leafIndex);
      const input = buildProofInput({ secret: BigInt(trade.secret), orderHash: trade.orderHash, path });
      const { proof, publicSignals } = await deps.prover().prove(input);
      // The proof and PROOF_READY in one transaction on the one row (read as above: proving took no lock).
      const stored = { proof, publicSignals, targetRoot: publicSignals[0]!, nullifierHash: publicSignals[3]! };
      return applyInTransaction(tradeId, { type: 'PROOF_READY' }, { read: trade, proof: stored, carriedOut });
    },
  };
}

/** The transaction hash as stored for the chain, or a `TradeTransactionMismatchError` naming txHash. */
function normalizeTxHash(chain: Pick<ChainConnection, 'kind'>, txHash: string): string {
  const canonical = canonicalTxHash(chain.kind, txHash);
  if (!canonical) throw new TradeTransactionMismatchError(`must be a 32-byte transaction hash, received '${txHash}'`);
  return canonical;
}
