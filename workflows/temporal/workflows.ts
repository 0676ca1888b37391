// The trade workflow: one per trade (id `trade-<tradeId>`). Deterministic code only: it imports the
// activities as types, the pure machine and the pure error list, and nothing of Node
// (.dependency-cruiser.cjs rule `temporal-workflow-sandbox`). It decides nothing itself: every
// event goes through `applyEvent`, which runs trades/lifecycle.ts in the database transaction; the
// workflow mirrors the state that comes back and carries out the follow-ups (prove, arm and cancel
// timers), starting with the machine's `start` commands.
import {
  ActivityFailure, ApplicationFailure, allHandlersFinished, condition, defineQuery, defineUpdate, log, proxyActivities,
  setHandler, upsertSearchAttributes,
} from '@temporalio/workflow';
import { NON_RETRYABLE_ERRORS } from '../../trades/lifecycle/errors.ts';
import {
  INITIAL_STATE, followUpsOf, isTerminal, start, type FollowUp, type TimerEvent, type TradeEvent, type TradeState,
} from '../../trades/lifecycle/index.ts';
import type { AppliedEvent, ChainEventRef, Confirmation, OrderFacts, TradeActivities } from '../../trades/orchestrator.ts';

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

/**
 * A confirmation reaches the workflow as an Update with the trade's order as the API read it: its
 * result is the verdict the HTTP answer carries.
 */
export const confirmUpdate = defineUpdate<AppliedEvent, [Confirmation, OrderFacts]>('confirm');
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

  // The armed timers (event -> ISO time). `timersChanged` counts arms and cancels, so the wait
  // below starts over whenever the machine changes them.
  const armed = new Map<TimerEvent, string>();
  let timersChanged = 0;
  const carryOut = (followUps: FollowUp[]) => {
    for (const command of followUps) {
      if (command.type === 'PROVE') proofRun ??= prove();
      if (command.type === 'ARM_TIMER') armed.set(command.event, command.at);
      if (command.type === 'CANCEL_TIMER') armed.delete(command.event);
      if (command.type !== 'PROVE') timersChanged += 1;
    }
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
    carryOut(applied.followUps);
    return applied;
  };

  const prove = async (): Promise<void> => {
    await proving.generateProof({ tradeId });
    await serially(() => apply({ type: 'PROOF_READY' }));
  };

  setHandler(stateQuery, () => state);
  setHandler(confirmUpdate, (confirmation, order) =>
    serially(async () => {
      try {
        const verified = await verifying.verifyConfirmation({ tradeId, confirmation, state, order });
        return await apply(verified.event, verified.chainEvent);
      } catch (error) {
        throw asUpdateFailure(error);
      }
    }),
  );

  carryOut(followUpsOf(start().commands, input));
  // Until the trade is over: wait for the earliest armed timer (the reservation's, then the lock
  // window's); one that fires is applied (the machine makes it a no-op if the trade moved on), one
  // the machine cancels or replaces starts the wait over.
  while (!isTerminal(state)) {
    const next = earliest(armed);
    const seen = timersChanged;
    if (!next) {
      await condition(() => isTerminal(state) || timersChanged !== seen);
      continue;
    }
    if (!(await condition(() => timersChanged !== seen, msUntil(next.at)))) {
      armed.delete(next.event);
      await serially(() => apply({ type: next.event }));
    }
  }
  if (proofRun) await proofRun;
  // Repeated confirms of a finished trade still get their `duplicate: true` for a while.
  await condition(() => false, input.lingerMs ?? 3_600_000);
  await condition(allHandlersFinished);
  log.info('trade finished', { tradeId, status: state.status });
  return state;
}

/** The armed timer due first. */
function earliest(armed: ReadonlyMap<TimerEvent, string>): { event: TimerEvent; at: string } | undefined {
  let first: { event: TimerEvent; at: string } | undefined;
  for (const [event, at] of armed) if (!first || new Date(at) < new Date(first.at)) first = { event, at };
  return first;
}

function msUntil(iso: string): number {
  return Math.max(1, new Date(iso).getTime() - Date.now());
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
