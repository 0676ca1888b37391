import {
  Client, Connection, WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, WorkflowNotFoundError, ServiceError, isGrpcServiceError, isGrpcDeadlineError,
} from '@temporalio/client';
import { tracingClientInterceptors } from '../../telemetry/temporal.ts';
import { OrchestratorUnavailableError } from '../../trades/orchestrator.ts';
import type { AppliedEvent, FollowUpOutbox, Orchestrator, RestorableTrade, StartedTrade, TradeFollowUp } from '../../trades/orchestrator.ts';
import type { TradeState } from '../../trades/lifecycle/index.ts';
import type { TemporalTls } from './connection-options.ts';
import { followUpsSignal, LIFECYCLE_TASK_QUEUE, PROOFS_TASK_QUEUE, tradeWorkflowId, type TradeWorkflowInput, type tradeWorkflow } from './workflows.ts';

export interface TemporalOrchestratorOptions {
  /** host:port of the Temporal frontend (TEMPORAL_ADDRESS), or a connection the caller owns. */
  address?: string;
  /** TLS and API key for `address` (temporalConnectOptions). */
  tls?: TemporalTls;
  apiKey?: string;
  connection?: Connection;
  namespace?: string;
  /** Task queue of the trade workflow and its light activities (default `trade-lifecycle`). */
  taskQueue?: string;
  /** Task queue of `generateProof` (default `proofs`). */
  proofsTaskQueue?: string;
  /**
   * Keep the AdId/RouteId (from the start) and TradeStatus (the final status, at END) search
   * attributes (default true; they must be registered on
   * the namespace, see `registerTradeSearchAttributes`). Off only for the time-skipping test
   * server, which cannot register them.
   */
  searchAttributes?: boolean;
  /**
   * How long a start may wait for the frontend (default 5 s). A start that runs out fails with
   * OrchestratorUnavailableError; the trade's start outbox row keeps it for the reconciler.
   */
  startTimeoutMs?: number;
  /** The follow-ups outbox: rows handed to a workflow are marked; `sweep` hands over rows left pending. */
  outbox?: FollowUpOutbox;
  /** How often this process sweeps the outbox (0 or unset: never; the worker process does). */
  sweepIntervalMs?: number;
  /** Told when a scheduled sweep fails (it runs again at the next interval). */
  onSweepFailed?: (error: unknown) => void;
  /**
   * The trade as the database holds it while it is open (undefined once over or unknown). Asked
   * only when a start or a delivery finds the trade's workflow closed: an open trade then gets a new
   * run resumed from the database (a database restored to before its workflow closed, a workflow an
   * operator terminated) instead of being left without timers. Unset: such a trade is left alone.
   */
  openTrade?: (tradeId: string) => Promise<RestorableTrade | undefined>;
  /**
   * The time, in ms since the epoch, a start's delay is measured from (default `Date.now`): it
   * must read the clock the Temporal server keeps (a test gives the time-skipping server's).
   */
  now?: () => number;
}

/** The Orchestrator plus what tests and operators read: the workflow's current state. */
export interface TemporalOrchestrator extends Orchestrator {
  readonly client: Client;
  /**
   * Hands the outbox rows left pending `olderThanMs` after they were written (an API process that
   * stopped, or found Temporal unreachable, between an event's commit and its signal) to their
   * workflows. Resolves how many rows it handed over.
   */
  sweep(olderThanMs?: number): Promise<number>;
  /**
   * Makes the trade's workflow carry out `restorable` (its state's timers, its proof): signals the
   * running workflow, or starts a new run when none runs (never started, or closed: the one case a
   * workflow id is reused). Idempotent: a timer armed twice is one, a proof asked twice runs once.
   */
  resume(restorable: RestorableTrade): Promise<void>;
  /** The status of the trade's latest workflow run (`RUNNING`, `COMPLETED`, `TERMINATED`...), or `missing`. */
  workflowStatus(tradeId: string): Promise<string>;
}

/**
 * The production orchestrator (TEMPORAL_ADDRESS set): one `tradeWorkflow` per trade, id
 * `trade-<tradeId>`. Starting is idempotent (a second start of a running or finished trade's
 * workflow is a no-op; with `openTrade`, a closed workflow of a trade the database holds open gets a
 * new run resumed from the database, see `resume`); the follow-ups of an event applied by the use cases reach the workflow as
 * the `followUps` signal (signal-with-start: a trade whose start has not happened yet is started by
 * it), one call, no round trip through a workflow task.
 */
export async function createTemporalOrchestrator(options: TemporalOrchestratorOptions): Promise<TemporalOrchestrator> {
  if (!options.connection && !options.address) throw new Error('createTemporalOrchestrator needs an address or a connection');
  const connection = options.connection ?? (await Connection.connect({ address: options.address, tls: options.tls, apiKey: options.apiKey }));
  const client = new Client({ connection, namespace: options.namespace ?? 'default', interceptors: tracingClientInterceptors() });
  const taskQueue = options.taskQueue ?? LIFECYCLE_TASK_QUEUE;

  const inputOf = (trade: StartedTrade): TradeWorkflowInput => ({
    tradeId: trade.tradeId,
    adId: trade.adId,
    routeId: trade.routeId,
    reservationExpiresAt: trade.reservationExpiresAt.toISOString(),
    lockDeadline: trade.lockDeadline.toISOString(),
    proofsTaskQueue: options.proofsTaskQueue ?? PROOFS_TASK_QUEUE,
    indexed: options.searchAttributes ?? true,
  });
  const startOptions = (input: TradeWorkflowInput) => ({
    workflowId: tradeWorkflowId(input.tradeId),
    taskQueue,
    args: [input] as [TradeWorkflowInput],
    // One workflow per trade: a repeated start never runs the lifecycle twice. Only `resume` reuses
    // a closed id, for a trade the database holds open (checked there, never assumed here).
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    // TradeStatus is the trade's final status, set by the workflow at END: a running workflow has none.
    ...(input.indexed ? { searchAttributes: { AdId: [input.adId], RouteId: [input.routeId] } } : {}),
  });

  const deadline = () => Date.now() + (options.startTimeoutMs ?? 5_000);
  const signalWithStart = (trade: StartedTrade, delivery: { followUps: TradeFollowUp[]; state?: TradeState }, reuseClosed: boolean) =>
    connection.withDeadline(deadline(), () => client.workflow.signalWithStart<typeof tradeWorkflow, [{
      followUps: TradeFollowUp[];
      state?: TradeState;
    }]>('tradeWorkflow', {
      ...startOptions(inputOf(trade)),
      ...(reuseClosed ? { workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE } : {}),
      signal: followUpsSignal,
      signalArgs: [{ followUps: delivery.followUps, ...(delivery.state ? { state: delivery.state } : {}) }],
    }));

  const resume = async (restorable: RestorableTrade) => {
    try {
      await signalWithStart(restorable.trade, { followUps: restorable.followUps, state: restorable.state }, true);
    } catch (error) {
      throw unreachableAs503(error);
    }
  };

  /**
   * The trade's workflow is closed. Its lifecycle is over unless the database says the trade is
   * open (restored to before the workflow closed, or the workflow terminated): then a new run
   * carries it on from the database's state.
   */
  const closedWorkflow = async (tradeId: string) => {
    const open = await options.openTrade?.(tradeId);
    if (open) await resume(open);
  };

  /** Signals the follow-ups to the trade's workflow, starting it if it never started; follow-ups that change nothing there are not sent. */
  const deliver = async (trade: StartedTrade, followUps: TradeFollowUp[], state?: TradeState) => {
    if (!movesTheWorkflow(followUps)) return;
    try {
      await signalWithStart(trade, { followUps, ...(state ? { state } : {}) }, false);
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return closedWorkflow(trade.tradeId);
      throw unreachableAs503(error);
    }
  };

  const workflowStatus = async (tradeId: string) => {
    try {
      return (await client.workflow.getHandle(tradeWorkflowId(tradeId)).describe()).status.name;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return 'missing';
      throw unreachableAs503(error);
    }
  };

  let sweepTimer: NodeJS.Timeout | undefined;
  let sweeping: Promise<unknown> = Promise.resolve();
  let closed = false;
  const scheduleSweep = () => {
    if (closed || !options.sweepIntervalMs || !options.outbox) return;
    sweepTimer = setTimeout(() => {
      sweeping = orchestrator.sweep().catch((error: unknown) => options.onSweepFailed?.(error)).finally(scheduleSweep);
    }, options.sweepIntervalMs);
    // The schedule alone never keeps a process alive.
    sweepTimer.unref();
  };

  const orchestrator: TemporalOrchestrator = {
    client,
    async startTrade(trade: StartedTrade) {
      // The first workflow task waits for the reservation's expiry (the server holds it back: no
      // task, no timer until then). Every delivery of follow-ups is a signal-with-start, which ends
      // the wait at once; a plain signal does not (reconcile's `end` to a workflow still waiting is
      // carried out at its first task, at the expiry). Measured on this process's clock: one behind
      // the server's runs the first task late by as much; one ahead runs it early, and the workflow
      // arms the reservation's timer for what is left.
      const delayMs = Math.ceil(trade.reservationExpiresAt.getTime() - (options.now ?? Date.now)());
      const delayed = { ...startOptions(inputOf(trade)), ...(delayMs > 0 ? { startDelay: delayMs } : {}) };
      try {
        await connection.withDeadline(deadline(), () => client.workflow.start<typeof tradeWorkflow>('tradeWorkflow', delayed));
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw unreachableAs503(error);
        // Started before: running is the idempotent repeat; closed needs the database's word.
        if (options.openTrade && (await workflowStatus(trade.tradeId)) !== 'RUNNING') await closedWorkflow(trade.tradeId);
      }
    },

    resume,
    workflowStatus,

    async carryOut(trade: StartedTrade, applied: AppliedEvent) {
      await deliver(trade, applied.followUps, applied.state);
      await options.outbox?.markCarriedOut(applied.outbox ?? []);
    },

    async sweep(olderThanMs = 30_000) {
      if (!options.outbox) return 0;
      const rows = await options.outbox.pending(olderThanMs);
      for (const row of rows) {
        await deliver(row.trade, [row.followUp]);
        await options.outbox.markCarriedOut([row.seq]);
      }
      return rows.length;
    },

    async close() {
      closed = true;
      clearTimeout(sweepTimer);
      await sweeping;
      if (!options.connection) await connection.close();
    },
  };
  scheduleSweep();
  return orchestrator;
}

/**
 * Whether `followUps` change what a trade's workflow does: a proof to run, a timer to arm, the end.
 * A timer cancelled with nothing else (the lock window once the lock is confirmed) is not sent: the
 * workflow closes at END without it firing, or it fires and its event is applied stale (the machine
 * changes nothing for a timer whose state is over), which costs less history than a signal for
 * every lock. No follow-ups at all (an unlock that does not end the trade) send nothing either.
 */
export function movesTheWorkflow(followUps: readonly TradeFollowUp[]): boolean {
  return followUps.some((f) => f.type === 'PROVE' || f.type === 'ARM_TIMER' || f.type === 'END');
}

/** A call the frontend did not answer (down, cut off, past its deadline) is "retry later", never a 500. */
function unreachableAs503(error: unknown): unknown {
  if (error instanceof ServiceError || isGrpcServiceError(error) || isGrpcDeadlineError(error)) {
    return new OrchestratorUnavailableError(`the trade orchestrator (Temporal) is unreachable: ${(error as Error).message}`, { cause: error });
  }
  return error;
}

/** The search attributes the trade workflow keeps current (all Keyword), for `temporal workflow list --query`. */
export const TRADE_SEARCH_ATTRIBUTES = ['TradeStatus', 'AdId', 'RouteId'] as const;

/**
 * Registers the trade search attributes on the namespace if missing (what
 * `temporal operator search-attribute create --name TradeStatus --type Keyword` does). Idempotent.
 */
export async function registerTradeSearchAttributes(connection: Connection, namespace = 'default'): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = TRADE_SEARCH_ATTRIBUTES.filter((name) => !(name in (existing.customAttributes ?? {})));
  if (missing.length === 0) return;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((name) => [name, INDEXED_VALUE_TYPE_KEYWORD])),
  });
}

/** temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD. */
const INDEXED_VALUE_TYPE_KEYWORD = 2;
