import { NotFinalError } from '../../chains/errors.ts';
import { TradeStateError, TradeTransactionMismatchError, TreeOutOfSyncError } from '../../trades/lifecycle/errors.ts';
import {
  INITIAL_STATE, awaitedAction, eventOf, followUpsOf, isTerminal, lockWindowVerdict, recordedActionFits, resume, transition, type LockWindowReading, type TradeAction,
  type TradeDeadlines, type TradeEvent, type TradeState,
} from '../../trades/lifecycle/index.ts';
import type { AppliedEvent, ChainEventRef, TradeActivities, TradeFollowUp, VerifiedConfirmation } from '../../trades/orchestrator.ts';

/** The trade's end as a follow-up, when `state` is terminal (as activities.ts adds it). */
const endOf = (state: TradeState): TradeFollowUp[] => (isTerminal(state) ? [{ type: 'END' }] : []);

/** One recorded activity call. */
export interface ActivityCall {
  name: keyof TradeActivities;
  tradeId: string;
  event?: TradeEvent['type'];
  /** The machine's commands when applied, or the error's code. */
  outcome: string;
}

/** What a test transaction hash says it is: `deposit-*`, `lock-*`, `unlock-ad-*`, `unlock-order-*`. */
function actionOfTx(txHash: string): TradeAction | undefined {
  if (txHash.startsWith('deposit-')) return { name: 'createOrder', side: 'order' };
  if (txHash.startsWith('lock-')) return { name: 'lockForOrder', side: 'ad' };
  if (txHash.startsWith('unlock-ad-')) return { name: 'unlock', side: 'ad' };
  if (txHash.startsWith('unlock-order-')) return { name: 'unlock', side: 'order' };
  return undefined;
}

const FAR: TradeDeadlines = { reservationExpiresAt: '2100-01-01T00:00:00.000Z', lockDeadline: '2100-01-01T00:00:00.000Z' };

/**
 * TradeActivities in memory over trades/lifecycle.ts (a test double named as such), for workflow
 * tests: the same contract as the real ones (the machine's awaited action, idempotent, typed
 * errors) without chains or a database. A reported txHash says what it is: `deposit-*`
 * (createOrder), `lock-*` (lockForOrder), `unlock-ad-*` / `unlock-order-*`, `notfinal-*` (seen,
 * not final), anything else: not this trade's. `deadlines` holds each trade's timer times, as the
 * trades table does. `setLockWindow` stands in for the ad chain a fired lock window asks (the real
 * activity reads the AdManager and the chain's time; the decision is the machine's
 * `lockWindowVerdict` either way): a lock found is applied as LOCK_CONFIRMED, a window the chain has
 * not closed is looked at again (`again`), timed from the window's last look, not this process's
 * clock, so that it follows the test server's skipped time.
 */
export function memoryActivities(options: { proofFailures?: number } = {}) {
  const trades = new Map<string, TradeState>();
  const deadlines = new Map<string, TradeDeadlines>();
  const recorded = new Map<string, { tradeId: string; action: TradeAction }>();
  const proofs = new Set<string>();
  const calls: ActivityCall[] = [];
  let proofFailures = options.proofFailures ?? 0;
  const lockWindows = new Map<string, LockWindowReading>();
  const lastLook = new Map<string, number>();

  const activities: TradeActivities = {
    async verifyConfirmation({ tradeId, confirmation, state }): Promise<VerifiedConfirmation> {
      const { txHash } = confirmation;
      const chainEvent = (event: string): ChainEventRef => ({ chainId: '31337', txHash, logIndex: 0, block: '1', blockHash: '0x01', event, args: {} });
      const fail = (error: Error): never => {
        calls.push({ name: 'verifyConfirmation', tradeId, outcome: (error as { code?: string }).code ?? error.name });
        throw error;
      };
      const seen = recorded.get(txHash);
      if (seen && seen.tradeId !== tradeId) fail(new TradeTransactionMismatchError(`${txHash} already confirmed something else`));
      if (seen && !recordedActionFits(seen.action.name, confirmation.kind)) fail(new TradeTransactionMismatchError(`${txHash} is this trade's ${seen.action.name}`));
      if (seen) {
        calls.push({ name: 'verifyConfirmation', tradeId, event: eventOf(seen.action).type, outcome: 'recorded' });
        return { event: eventOf(seen.action), chainEvent: chainEvent(seen.action.name) };
      }
      const awaited = awaitedAction(state, confirmation.kind);
      if (!awaited.ok) fail(new TradeStateError(`trade ${tradeId}: ${awaited.reason}`));
      if (txHash.startsWith('notfinal-')) fail(new NotFinalError(`transaction ${txHash} has 0 of 1 confirmations`, 0, 1));
      const action = awaited.ok ? awaited.action : undefined;
      const sent = actionOfTx(txHash);
      if (!sent || !action || sent.name !== action.name || sent.side !== action.side) fail(new TradeTransactionMismatchError(`${txHash} did not emit this order's event`));
      calls.push({ name: 'verifyConfirmation', tradeId, event: eventOf(action!).type, outcome: 'verified' });
      return { event: eventOf(action!), chainEvent: chainEvent(action!.name) };
    },

    async applyEvent({ tradeId, event, chainEvent }): Promise<AppliedEvent> {
      const state = trades.get(tradeId) ?? INITIAL_STATE;
      const reading = lockWindows.get(tradeId);
      if (event.type === 'LOCK_WINDOW_CLOSED' && reading) {
        const deadline = Date.parse((deadlines.get(tradeId) ?? FAR).lockDeadline);
        const verdict = lockWindowVerdict(state, reading, BigInt(Math.floor(deadline / 1000)));
        if (verdict.do === 'wait') {
          const at = (lastLook.get(tradeId) ?? deadline) + verdict.seconds * 1000;
          lastLook.set(tradeId, at);
          calls.push({ name: 'applyEvent', tradeId, event: event.type, outcome: 'put off' });
          return { state, followUps: [{ type: 'ARM_TIMER', event: 'LOCK_WINDOW_CLOSED', at: new Date(at).toISOString(), again: true }], duplicate: false, stale: true };
        }
        if (verdict.do === 'lock') {
          const found = { chainId: '31338', txHash: `lock-found-${tradeId}`, logIndex: 0, block: '1', blockHash: '0x01', event: 'lockForOrder', args: {} };
          return { ...(await activities.applyEvent({ tradeId, event: { type: 'LOCK_CONFIRMED' }, chainEvent: found })), appliedAs: { type: 'LOCK_CONFIRMED' } };
        }
      }
      const result = transition(state, event);
      if (!result.ok) {
        if (result.duplicate || result.stale) {
          calls.push({ name: 'applyEvent', tradeId, event: event.type, outcome: result.duplicate ? 'duplicate' : 'stale' });
          return { state, followUps: endOf(state), duplicate: result.duplicate, ...(result.stale ? { stale: true } : {}) };
        }
        calls.push({ name: 'applyEvent', tradeId, event: event.type, outcome: 'TRADE_STATE' });
        throw new TradeStateError(`trade ${tradeId}: ${result.reason}`);
      }
      const action = chainEvent ? actionOfTx(chainEvent.txHash) : undefined;
      if (chainEvent && action) recorded.set(chainEvent.txHash, { tradeId, action });
      trades.set(tradeId, result.state);
      // The ledger's moves (the keeper's duties are the database step's too, and none of the orchestrator's business: not listed).
      const balance = result.commands.filter((c) => c.type !== 'ARM_TIMER' && c.type !== 'CANCEL_TIMER' && c.type !== 'PROVE' && c.type !== 'SEND');
      const proving = result.commands.some((c) => c.type === 'PROVE') ? ['PROVE'] : [];
      calls.push({ name: 'applyEvent', tradeId, event: event.type, outcome: [...proving, ...balance.map((c) => c.type)].join(',') || 'applied' });
      return { state: result.state, followUps: [...followUpsOf(result.commands, deadlines.get(tradeId) ?? FAR), ...endOf(result.state)], duplicate: false };
    },

    // The proof and PROOF_READY together, as activities.ts does in one transaction.
    async generateProof({ tradeId }): Promise<AppliedEvent> {
      if (proofFailures > 0) {
        proofFailures -= 1;
        calls.push({ name: 'generateProof', tradeId, outcome: 'TREE_OUT_OF_SYNC' });
        throw new TreeOutOfSyncError('the portal root moved while syncing: try again');
      }
      const state = trades.get(tradeId) ?? INITIAL_STATE;
      if (proofs.has(tradeId)) {
        calls.push({ name: 'generateProof', tradeId, outcome: 'already proved' });
        return { state, followUps: [...followUpsOf(resume(state), deadlines.get(tradeId) ?? FAR), ...endOf(state)], duplicate: true };
      }
      proofs.add(tradeId);
      const result = transition(state, { type: 'PROOF_READY' });
      if (!result.ok) {
        calls.push({ name: 'generateProof', tradeId, outcome: result.duplicate ? 'proved, duplicate' : 'proved, stale' });
        return { state, followUps: endOf(state), duplicate: Boolean(result.duplicate), ...(result.stale ? { stale: true } : {}) };
      }
      trades.set(tradeId, result.state);
      calls.push({ name: 'generateProof', tradeId, outcome: 'proved' });
      return { state: result.state, followUps: [...followUpsOf(result.commands, deadlines.get(tradeId) ?? FAR), ...endOf(result.state)], duplicate: false };
    },
  };

  return {
    activities,
    calls,
    /** Records a trade's timer times (what the trades row holds), before it is started. */
    setDeadlines: (tradeId: string, times: TradeDeadlines) => deadlines.set(tradeId, times),
    /** What the ad chain says when the trade's lock window timer fires (unset: the window closes on the timer). */
    setLockWindow: (tradeId: string, reading: LockWindowReading) => lockWindows.set(tradeId, reading),
    /** The stored state of a trade (what the database would hold). */
    stateOf: (tradeId: string) => trades.get(tradeId) ?? INITIAL_STATE,
    /** Calls for one trade, as `name:event:outcome`. */
    callsOf: (tradeId: string) => calls.filter((c) => c.tradeId === tradeId).map((c) => [c.name, c.event, c.outcome].filter(Boolean).join(':')),
    failProofs(n: number) {
      proofFailures = n;
    },
  };
}
