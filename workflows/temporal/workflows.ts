// The trade workflow: one per trade (id `trade-<tradeId>`). Deterministic code only: it imports the
// activities as types, the pure machine and the pure error list, and nothing of Node
// (.dependency-cruiser.cjs rule `temporal-workflow-sandbox`). It decides nothing itself: it carries
// out follow-ups (prove, arm and cancel timers, the end), starting with the machine's `start`
// commands; the others come from its own steps' results (a timer applied, the proof) and from the
// `followUps` signal (an event the use cases applied: a confirmation, an ended reservation).
//
// Versioning (workflows/README.md "Versioning"): a trade's workflow lives for hours, so a change to
// what it does is made behind `patched(<id>)`: histories recorded before the change replay through
// the old path (`tradeWorkflowV1`), new executions take the new one. The old path stays until no
// execution of it is open; then `deprecatePatch(<id>)`, then, a release later, both go.
import {
  ActivityFailure, ApplicationFailure, CancellationScope, allHandlersFinished, condition, defineQuery, defineSignal, defineUpdate, log, patched,
  proxyActivities, setHandler, sleep, upsertSearchAttributes,
} from '@temporalio/workflow';
import { NON_RETRYABLE_ERRORS } from '../../trades/lifecycle/errors.ts';
import {
  INITIAL_STATE, followUpsOf, isTerminal, start, type FollowUp, type TimerEvent, type TradeEvent, type TradeState,
} from '../../trades/lifecycle/index.ts';
import type { AppliedEvent, ChainEventRef, Confirmation, OrderFacts, TradeActivities, TradeFollowUp } from '../../trades/orchestrator.ts';

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
  /**
   * The older paths only (V1, V2): how long a finished trade's workflow stayed open after END for
   * the `confirm` Update of a release before the outbox. Default 1 h. The lean path closes at END.
   */
  lingerMs?: number;
  /** Task queue of `generateProof` (default `proofs`). */
  proofsTaskQueue?: string;
  /**
   * Whether the search attributes are kept (default true): AdId/RouteId from the start, TradeStatus
   * (the lean path: the trade's final status, set once at END; the older paths: every status seen).
   */
  indexed?: boolean;
}

/**
 * A confirmation reaches the workflow as an Update with the trade's order as the API read it: its
 * result is the verdict the HTTP answer carries.
 */
export const confirmUpdate = defineUpdate<AppliedEvent, [Confirmation, OrderFacts]>('confirm');
/** The trade's state as the workflow last saw it applied (observation only: nothing in the workflow decides on it). */
export const stateQuery = defineQuery<TradeState>('state');

/** What the use cases send after applying an event: its follow-ups, and the state it left (for the query and the search attribute). */
export interface FollowUpsDelivery {
  followUps: TradeFollowUp[];
  state?: TradeState;
}
/** The follow-ups of an event applied outside the workflow (trades/service.ts, then `Orchestrator.carryOut`). */
export const followUpsSignal = defineSignal<[FollowUpsDelivery]>('followUps');

/** The patch of the outbox-driven workflow: executions started before it run `tradeWorkflowV1`, so their histories replay. */
export const FOLLOW_UPS_PATCH = 'follow-ups-outbox';
/** The patch of the lean workflow (`tradeWorkflowV3`): executions started before it run V2 (or V1), so their histories replay. */
export const LEAN_PATCH = 'lean-trade';
/**
 * The patch of the delayed-start workflow (`tradeWorkflowV4`): executions started before it run V3
 * (or older), so their histories replay.
 */
export const DELAYED_START_PATCH = 'delayed-start';

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
  retry: {
    initialInterval: '500 ms',
    backoffCoefficient: 2,
    maximumInterval: '2 s',
    maximumAttempts: 3,
    nonRetryableErrorTypes: [...NON_RETRYABLE, 'NotFinalError'],
  },
});

/** The lifecycle of one trade: reservation timer, deposit, proof, lock window, lock, both unlocks. */
export async function tradeWorkflow(input: TradeWorkflowInput): Promise<TradeState> {
  // Decided once, at the first workflow task, newest first: a recorded history without a marker is
  // the older path's (replaying, `patched` of a marker the history lacks records nothing). A new
  // execution records only the newest marker.
  if (patched(DELAYED_START_PATCH)) return tradeWorkflowV4(input);
  if (patched(LEAN_PATCH)) return tradeWorkflowV3(input);
  if (patched(FOLLOW_UPS_PATCH)) return tradeWorkflowV2(input);
  return tradeWorkflowV1(input);
}

/** Proofs: on the prover processes' queue, heartbeating. */
function provingActivities(input: TradeWorkflowInput) {
  return proxyActivities<Pick<TradeActivities, 'generateProof'>>({
    taskQueue: input.proofsTaskQueue ?? PROOFS_TASK_QUEUE,
    startToCloseTimeout: '10 minutes',
    // A prover that dies mid-proof stops heartbeating: the proof moves to another prover within 10 s.
    heartbeatTimeout: '10 s',
    retry: { initialInterval: '1 s', backoffCoefficient: 2, maximumInterval: '1 minute', nonRetryableErrorTypes: NON_RETRYABLE },
  });
}

/**
 * The delayed-start lifecycle: V3, started by the client with Temporal's `startDelay` set to the
 * reservation's expiry (client.ts `startTrade`), so a trade that is never deposited costs no
 * workflow task and no timer until then. Its first task comes either with the deposit's
 * follow-ups (signal-with-start ends the delay at once), which cancel the reservation's timer
 * before it is started (no timer event), or at the reservation's expiry: a timer whose time has
 * come is applied without being started (V3 would start a 1 ms timer), and the machine decides
 * what the expiry does. Everything else is V3's.
 */
function tradeWorkflowV4(input: TradeWorkflowInput): Promise<TradeState> {
  return leanLifecycle(input, { applyDueTimers: true });
}

/**
 * The lean lifecycle: what V2 carries out, in fewer history events. It closes at END (no linger:
 * no API of this release or the previous one sends the `confirm` Update, and a repeated
 * confirmation of a finished trade is answered from the database); TradeStatus is upserted once,
 * at END (AdId and RouteId come with the start); a timer runs as its own timer, cancelled only
 * when the machine cancels or replaces it, never because a signal arrived, and left to the server
 * when the workflow closes. The client signals only follow-ups that change what this workflow does
 * (client.ts `movesTheWorkflow`): a timer the machine cancels with nothing else (the lock window
 * once the lock is confirmed) stays armed here; if it fires before END, its event is applied and
 * the machine finds it stale (machine.ts `stale`), changing nothing.
 */
function tradeWorkflowV3(input: TradeWorkflowInput): Promise<TradeState> {
  return leanLifecycle(input, { applyDueTimers: false });
}

/** V3 and V4: `applyDueTimers` applies a timer already due when it comes up instead of starting it (V4). */
async function leanLifecycle(input: TradeWorkflowInput, options: { applyDueTimers: boolean }): Promise<TradeState> {
  const { tradeId } = input;
  const proving = provingActivities(input);
  // Observation only (the state query, the final TradeStatus): nothing below decides on it.
  let seen: TradeState = INITIAL_STATE;
  const observe = (next: TradeState | undefined) => {
    if (next) seen = next;
  };
  const carrier = followUpCarrier(tradeId, proving, observe);
  const { armed, carryOut } = carrier;
  carryOutFromTheStart(input, carrier, observe, () => seen);

  // The running timer: the earliest armed one. It is cancelled only when the earliest armed timer
  // is another (or none); at END it is left running, so closing records no cancellation.
  let timer: { event: TimerEvent; at: string; scope: CancellationScope; fired: boolean } | undefined;
  while (!carrier.ended) {
    const next = earliest(armed);
    if (timer && (timer.event !== next?.event || timer.at !== next.at)) {
      timer.scope.cancel();
      timer = undefined;
    }
    if (next && !timer && options.applyDueTimers && new Date(next.at).getTime() <= Date.now()) {
      // Due already (the first task of a start delayed to this timer's time): applied as if it fired.
      armed.delete(next.event);
      const applied = await lifecycle.applyEvent({ tradeId, event: { type: next.event }, carriedOut: true });
      observe(applied.state);
      carryOut(applied.followUps);
      continue;
    }
    if (next && !timer) {
      const running = { ...next, scope: new CancellationScope(), fired: false };
      running.scope.run(() => sleep(msUntil(next.at))).then(() => { running.fired = true; }, () => undefined);
      timer = running;
    }
    const seenChange = carrier.changed;
    const waiting = timer;
    await condition(() => carrier.ended || carrier.changed !== seenChange || waiting?.fired === true);
    if (carrier.ended || !waiting?.fired) continue;
    timer = undefined;
    // A timer cancelled or replaced in the activation it fired in is not applied.
    if (armed.get(waiting.event) !== waiting.at) continue;
    armed.delete(waiting.event);
    const applied = await lifecycle.applyEvent({ tradeId, event: { type: waiting.event }, carriedOut: true });
    observe(applied.state);
    carryOut(applied.followUps);
  }
  if (carrier.proofRun) await carrier.proofRun;
  await condition(allHandlersFinished);
  // An END the outbox sweep handed over comes without the state: a final status not seen is not indexed.
  if (input.indexed !== false && isTerminal(seen)) upsertSearchAttributes({ TradeStatus: [seen.status] });
  log.info('trade finished', { tradeId, status: seen.status });
  return seen;
}

/**
 * The outbox-driven lifecycle: carries out follow-ups only. Its own steps (a timer that fires, the
 * proof) are applied by one activity each, in one transaction, and return their follow-ups; every
 * other event arrives as the `followUps` signal. Ends on the `END` follow-up (the trade is over),
 * after `lingerMs`. The `confirm` Update stays for API pods of the previous release during a rollout.
 */
async function tradeWorkflowV2(input: TradeWorkflowInput): Promise<TradeState> {
  const { tradeId } = input;
  const proving = provingActivities(input);
  // Observation only (the state query, the TradeStatus search attribute): nothing below decides on it.
  let seen: TradeState = INITIAL_STATE;
  const observe = (next: TradeState | undefined) => {
    if (!next) return;
    if (next.status !== seen.status && input.indexed !== false) upsertSearchAttributes({ TradeStatus: [next.status] });
    seen = next;
  };
  const carrier = followUpCarrier(tradeId, proving, observe);
  const { armed, carryOut } = carrier;
  carryOutFromTheStart(input, carrier, observe, () => seen);
  setHandler(confirmUpdate, async (confirmation, order) => {
    try {
      const verified = await verifying.verifyConfirmation({ tradeId, confirmation, state: seen, order });
      const applied = await lifecycle.applyEvent({ tradeId, event: verified.event, chainEvent: verified.chainEvent, carriedOut: true });
      observe(applied.state);
      carryOut(applied.followUps);
      return applied;
    } catch (error) {
      throw asUpdateFailure(error);
    }
  });

  while (!carrier.ended) {
    const next = earliest(armed);
    const seenChange = carrier.changed;
    if (!next) {
      await condition(() => carrier.ended || carrier.changed !== seenChange);
      continue;
    }
    if (!(await condition(() => carrier.changed !== seenChange, msUntil(next.at)))) {
      armed.delete(next.event);
      const applied = await lifecycle.applyEvent({ tradeId, event: { type: next.event }, carriedOut: true });
      observe(applied.state);
      carryOut(applied.followUps);
    }
  }
  if (carrier.proofRun) await carrier.proofRun;
  await condition(() => false, input.lingerMs ?? 3_600_000);
  await condition(allHandlersFinished);
  log.info('trade finished', { tradeId, status: seen.status });
  return seen;
}

/**
 * The lifecycle as it ran before the outbox (executions started before FOLLOW_UPS_PATCH): kept
 * command for command so their histories replay; it also carries out the `followUps` signal, which
 * the API of this release sends instead of the `confirm` Update.
 */
async function tradeWorkflowV1(input: TradeWorkflowInput): Promise<TradeState> {
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
    carryOut(applied.followUps.filter((f): f is FollowUp => f.type !== 'END'));
    return applied;
  };

  const prove = async (): Promise<void> => {
    await proving.generateProof({ tradeId });
    await serially(() => apply({ type: 'PROOF_READY' }));
  };

  setHandler(stateQuery, () => state);
  // This release's API applies confirmations itself and signals their follow-ups (no commands of their own: old histories replay).
  setHandler(followUpsSignal, ({ followUps, state: applied }) => {
    if (applied) publish(applied);
    carryOut(followUps.filter((f): f is FollowUp => f.type !== 'END'));
  });
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

/**
 * What a lifecycle workflow carries out of the follow-ups it is handed: timers armed and cancelled
 * (`armed`, read by its loop), the proof started once (its result applied as the follow-ups it
 * returns), the end. `changed` counts every follow-up, so a loop waiting on it wakes for each.
 * Commands are issued exactly as the follow-ups arrive: recorded histories replay through it.
 */
function followUpCarrier(tradeId: string, proving: ReturnType<typeof provingActivities>, observe: (next: TradeState | undefined) => void) {
  const carrier = {
    armed: new Map<TimerEvent, string>(),
    changed: 0,
    ended: false,
    proofRun: undefined as Promise<void> | undefined,
    carryOut(followUps: readonly TradeFollowUp[]): void {
      for (const command of followUps) {
        if (command.type === 'PROVE') carrier.proofRun ??= prove();
        if (command.type === 'ARM_TIMER') carrier.armed.set(command.event, command.at);
        if (command.type === 'CANCEL_TIMER') carrier.armed.delete(command.event);
        if (command.type === 'END') carrier.ended = true;
        carrier.changed += 1;
      }
    },
  };
  const prove = async (): Promise<void> => {
    const applied = await proving.generateProof({ tradeId, carriedOut: true });
    observe(applied.state);
    carrier.carryOut(applied.followUps);
  };
  return carrier;
}

/**
 * Carries out the start's follow-ups, then each `followUps` signal's (a signal sent with the start,
 * signalWithStart, after them), and answers the state query with what the workflow last saw.
 */
function carryOutFromTheStart(
  input: TradeWorkflowInput, carrier: ReturnType<typeof followUpCarrier>, observe: (next: TradeState | undefined) => void, seen: () => TradeState,
): void {
  carrier.carryOut(followUpsOf(start().commands, input));
  setHandler(followUpsSignal, ({ followUps, state }) => {
    observe(state);
    carrier.carryOut(followUps);
  });
  setHandler(stateQuery, seen);
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
