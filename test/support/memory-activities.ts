import { NotFinalError } from '../../chains/errors.ts';
import { TradeStateError, TradeTransactionMismatchError, TreeOutOfSyncError } from '../../trades/lifecycle-errors.ts';
import { INITIAL_STATE, transition, type TradeEvent, type TradeState } from '../../trades/lifecycle.ts';
import type { AppliedEvent, ChainEventRef, TradeActivities, VerifiedConfirmation } from '../../trades/orchestrator.ts';

/** One recorded activity call. */
export interface ActivityCall {
  name: keyof TradeActivities;
  tradeId: string;
  event?: TradeEvent['type'];
  /** The machine's commands when applied, or the error's code. */
  outcome: string;
}

/**
 * TradeActivities in memory over machine.ts, for workflow tests: the same contract as the real
 * ones (idempotent, typed errors) without chains or a database. A reported txHash says what it is:
 * `deposit-*` (createOrder), `lock-*` (lockForOrder), `unlock-ad-*` / `unlock-order-*`,
 * `notfinal-*` (seen, not final), anything else: not this trade's.
 */
export function memoryActivities(options: { proofFailures?: number } = {}) {
  const trades = new Map<string, TradeState>();
  const recorded = new Map<string, string>(); // txHash -> tradeId
  const proofs = new Set<string>();
  const calls: ActivityCall[] = [];
  let proofFailures = options.proofFailures ?? 0;

  const activities: TradeActivities = {
    async verifyConfirmation({ tradeId, confirmation }): Promise<VerifiedConfirmation> {
      const { txHash } = confirmation;
      const chainEvent = (event: string): ChainEventRef => ({ chainId: '31337', txHash, logIndex: 0, block: '1', blockHash: '0x01', event, args: {} });
      const fail = (error: Error): never => {
        calls.push({ name: 'verifyConfirmation', tradeId, outcome: (error as { code?: string }).code ?? error.name });
        throw error;
      };
      const owner = recorded.get(txHash);
      if (owner && owner !== tradeId) fail(new TradeTransactionMismatchError(`${txHash} already confirmed something else`));
      let verified: VerifiedConfirmation | undefined;
      if (confirmation.kind === 'deposit-or-lock' && txHash.startsWith('deposit-')) verified = { event: { type: 'DEPOSIT_CONFIRMED' }, chainEvent: chainEvent('OrderCreated') };
      if (confirmation.kind === 'deposit-or-lock' && txHash.startsWith('lock-')) verified = { event: { type: 'LOCK_CONFIRMED' }, chainEvent: chainEvent('OrderLocked') };
      if (confirmation.kind === 'unlock' && txHash.startsWith('unlock-ad-')) verified = { event: { type: 'UNLOCK_CONFIRMED', side: 'ad' }, chainEvent: chainEvent('OrderUnlocked') };
      if (confirmation.kind === 'unlock' && txHash.startsWith('unlock-order-')) verified = { event: { type: 'UNLOCK_CONFIRMED', side: 'order' }, chainEvent: chainEvent('OrderUnlocked') };
      if (txHash.startsWith('notfinal-')) fail(new NotFinalError(`transaction ${txHash} has 0 of 1 confirmations`, 0, 1));
      if (!verified) fail(new TradeTransactionMismatchError(`${txHash} did not emit this order's event`));
      calls.push({ name: 'verifyConfirmation', tradeId, event: verified!.event.type, outcome: 'verified' });
      return verified!;
    },

    async applyEvent({ tradeId, event, chainEvent }): Promise<AppliedEvent> {
      const state = trades.get(tradeId) ?? INITIAL_STATE;
      const result = transition(state, event);
      if (!result.ok) {
        if (result.duplicate) {
          calls.push({ name: 'applyEvent', tradeId, event: event.type, outcome: 'duplicate' });
          return { state, followUps: [], duplicate: true };
        }
        calls.push({ name: 'applyEvent', tradeId, event: event.type, outcome: 'TRADE_STATE' });
        throw new TradeStateError(`trade ${tradeId}: ${result.reason}`);
      }
      if (chainEvent) recorded.set(chainEvent.txHash, tradeId);
      trades.set(tradeId, result.state);
      calls.push({ name: 'applyEvent', tradeId, event: event.type, outcome: result.commands.map((c) => c.type).join(',') || 'applied' });
      return { state: result.state, followUps: result.commands.filter((c) => c.type === 'PROVE'), duplicate: false };
    },

    async generateProof({ tradeId }): Promise<void> {
      if (proofFailures > 0) {
        proofFailures -= 1;
        calls.push({ name: 'generateProof', tradeId, outcome: 'TREE_OUT_OF_SYNC' });
        throw new TreeOutOfSyncError('the portal root moved while syncing: try again');
      }
      calls.push({ name: 'generateProof', tradeId, outcome: proofs.has(tradeId) ? 'already proved' : 'proved' });
      proofs.add(tradeId);
    },
  };

  return {
    activities,
    calls,
    /** The stored state of a trade (what the database would hold). */
    stateOf: (tradeId: string) => trades.get(tradeId) ?? INITIAL_STATE,
    /** Calls for one trade, as `name:event:outcome`. */
    callsOf: (tradeId: string) => calls.filter((c) => c.tradeId === tradeId).map((c) => [c.name, c.event, c.outcome].filter(Boolean).join(':')),
    failProofs(n: number) {
      proofFailures = n;
    },
  };
}
