// The trade workflow: one per trade (id `trade-<tradeId>`). Deterministic code only: it imports the
// activities as types, the pure machine and the pure error list, and nothing of Node
// (.dependency-cruiser.cjs rule `temporal-workflow-sandbox`). It decides nothing itself: every
// event goes through `applyEvent`, which runs machine.ts in the database transaction, and the
// workflow mirrors the state that comes back.
import {
  ActivityFailure, ApplicationFailure, allHandlersFinished, condition, defineQuery, defineUpdate, log, proxyActivities,
  setHandler, upsertSearchAttributes,
} from '@temporalio/workflow';
import { NON_RETRYABLE_ERRORS } from '../../trades/lifecycle-errors.ts';
import { INITIAL_STATE, isTerminal, type TradeEvent, type TradeState } from '../../trades/lifecycle.ts';
import type { AppliedEvent, ChainEventRef, Confirmation, TradeActivities } from '../../trades/orchestrator.ts';

/** Task queues: the light lifecycle steps, and the proofs (served by the prover processes). */
export const LIFECYCLE_TASK_QUEUE = 'trade-lifecycle';
export const PROOFS_TASK_QUEUE = 'proofs';

/** The workflow id of a trade: one workflow per trade, so starting twice is a no-op. */
export const tradeWorkflowId = (tradeId: string): string => `trade-${tradeId}`;

/** What the workflow starts with (StartedTrade, dates as ISO strings: workflow arguments are JSON). */
export interface TradeWorkflowInput {
  tradeId: string;
  adId: string;
  routeId: string;
  reservationExpiresAt: string;
  lockDeadline: string;
  /** How long a finished trade keeps answering repeated confirms (`duplicate: true`) before the workflow closes. Default 1 h. */
  lingerMs?: number;
  /** Task queue of `generateProof` (default `proofs`). */
  proofsTaskQueue?: string;
  /** Whether TradeStatus/AdId/RouteId are kept as search attributes (default true). */
  indexed?: boolean;
}

/** A confirmation reaches the workflow as an Update: its result is the verdict the HTTP answer carries. */
export const confirmUpdate = defineUpdate<AppliedEvent, [Confirmation]>('confirm');
/** The trade's state as the workflow last saw it applied. */
export const stateQuery = defineQuery<TradeState>('state');

/** Error types no retry can fix (the domain's list; NotFinal is retryable but the client retries it, not us). */
const NON_RETRYABLE = [...NON_RETRYABLE_ERRORS] as string[];

const lifecycle = proxyActivities<TradeActivities>({
  taskQueue: LIFECYCLE_TASK_QUEUE,
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '500 ms', backoffCoefficient: 2, maximumInterval: '30 s', nonRetryableErrorTypes: NON_RETRYABLE },
});

// Verification answers an HTTP request: a transaction not final yet goes straight back to the client
// (409, retry later); an unreachable RPC is retried a few times, briefly.
const verifying = proxyActivities<TradeActivities>({
  taskQueue: LIFECYCLE_TASK_QUEUE,
  startToCloseTimeout: '30 s',
  retry: { initialInterval: '500 ms', backoffCoefficient: 2, maximumInterval: '2 s', maximumAttempts: 3, nonRetryableErrorTypes: [...NON_RETRYABLE, 'NotFinalError'] },
});

/** The lifecycle of one trade: reservation timer, deposit, proof, lock window, lock, both unlocks. */
export async function tradeWorkflow(input: TradeWorkflowInput): Promise<TradeState> {
  const { tradeId } = input;
  const proving = proxyActivities<Pick<TradeActivities, 'generateProof'>>({
    taskQueue: input.proofsTaskQueue ?? PROOFS_TASK_QUEUE,
    startToCloseTimeout: '10 minutes',
    // A prover that dies mid-proof stops heartbeating: the proof moves to another prover within 10 s.
    heartbeatTimeout: '10 s',
    retry: { initialInterval: '1 s', backoffCoefficient: 2, maximumInterval: '1 minute', nonRetryableErrorTypes: NON_RETRYABLE },
  });

  let state: TradeState = INITIAL_STATE;
  let proofRun: Promise<void> | undefined;
  const publish = (next: TradeState) => {
    if (next.status !== state.status && input.indexed !== false) upsertSearchAttributes({ TradeStatus: [next.status] });
    state = next;
  };

  // Events are applied one at a time, in arrival order: confirms, timers and the proof's result
  // never interleave inside the workflow (the database row lock serialises them anyway).
  let tail: Promise<unknown> = Promise.resolve();
  const serially = <T>(step: () => Promise<T>): Promise<T> => {
    const run = tail.then(step, step);
    tail = run.catch(() => undefined);
    return run;
  };

  const apply = async (event: TradeEvent, chainEvent?: ChainEventRef): Promise<AppliedEvent> => {
    const applied = await lifecycle.applyEvent({ tradeId, event, chainEvent });
    publish(applied.state);
    for (const command of applied.followUps) if (command.type === 'PROVE') proofRun ??= prove();
    return applied;
  };

  const prove = async (): Promise<void> => {
    await proving.generateProof({ tradeId });
    await serially(() => apply({ type: 'PROOF_READY' }));
  };

  /** A timer's event: applied unless the trade moved on meanwhile (the machine refuses it). */
  const timerFired = (event: TradeEvent) =>
    serially(async () => {
      try {
        await apply(event);
      } catch (error) {
        if (failureType(error) === 'TradeStateError') return;
        throw error;
      }
    });

  setHandler(stateQuery, () => state);
  setHandler(confirmUpdate, (confirmation) =>
    serially(async () => {
      try {
        const verified = await verifying.verifyConfirmation({ tradeId, confirmation });
        return await apply(verified.event, verified.chainEvent);
      } catch (error) {
        throw asUpdateFailure(error);
      }
    }),
  );

  // 1. Awaiting the deposit until the reservation runs out.
  if (!(await condition(() => state.status !== 'PENDING', msUntil(input.reservationExpiresAt)))) {
    await timerFired({ type: 'RESERVATION_EXPIRED' });
  }
  // 2. Deposited: the Maker may lock until the lock deadline.
  if (state.status === 'DEPOSITED' && !(await condition(() => state.status !== 'DEPOSITED', msUntil(input.lockDeadline)))) {
    await timerFired({ type: 'LOCK_WINDOW_CLOSED' });
  }
  // 3. Locked: both unlocks, however long they take.
  await condition(() => isTerminal(state));
  if (proofRun) await proofRun;
  // Repeated confirms of a finished trade still get their `duplicate: true` for a while.
  await condition(() => false, input.lingerMs ?? 3_600_000);
  await condition(allHandlersFinished);
  log.info('trade finished', { tradeId, status: state.status });
  return state;
}

function msUntil(iso: string): number {
  return Math.max(1, new Date(iso).getTime() - Date.now());
}

/** The error type of an activity failure (the domain error's class name), if any. */
function failureType(error: unknown): string | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

/**
 * An update fails with the domain error itself (type, message, and code/kind/retryable/field in
 * details), not the activity wrapper, so the client rebuilds the typed error the API maps.
 */
function asUpdateFailure(error: unknown): unknown {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    return ApplicationFailure.create({ type: cause.type ?? 'Error', message: cause.message, details: cause.details ?? [], nonRetryable: true });
  }
  return error;
}
