import {
  Client, Connection, WorkflowExecutionAlreadyStartedError, WorkflowFailedError, WorkflowIdReusePolicy, WorkflowNotFoundError,
  WorkflowUpdateFailedError, ApplicationFailure, ServiceError, isGrpcServiceError, isGrpcDeadlineError,
} from '@temporalio/client';
import { tracingClientInterceptors } from '../../telemetry/temporal.ts';
import { OrchestratorUnavailableError } from '../../trades/orchestrator.ts';
import { TradeStateError } from '../../trades/lifecycle/errors.ts';
import type { AppliedEvent, Confirmation, ConfirmingTrade, Orchestrator, StartedTrade } from '../../trades/orchestrator.ts';
import type { TemporalTls } from './connection-options.ts';
import { fromApplicationFailure } from './failures.ts';
import { confirmUpdate, LIFECYCLE_TASK_QUEUE, PROOFS_TASK_QUEUE, tradeWorkflowId, type TradeWorkflowInput, type tradeWorkflow } from './workflows.ts';

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
  /** How long a finished trade's workflow keeps answering repeated confirms (default 1 h). */
  lingerMs?: number;
  /**
   * Keep the TradeStatus/AdId/RouteId search attributes (default true; they must be registered on
   * the namespace, see `registerTradeSearchAttributes`). Off only for the time-skipping test
   * server, which cannot register them.
   */
  searchAttributes?: boolean;
  /**
   * How long a start may wait for the frontend (default 5 s). A start that runs out fails with
   * OrchestratorUnavailableError; the trade's start outbox row keeps it for the reconciler.
   */
  startTimeoutMs?: number;
}

/** The Orchestrator plus what tests and operators read: the workflow's current state. */
export interface TemporalOrchestrator extends Orchestrator {
  readonly client: Client;
}

/**
 * The production orchestrator (TEMPORAL_ADDRESS set): one `tradeWorkflow` per trade, id
 * `trade-<tradeId>`. Starting is idempotent (a second start of a running or finished trade's
 * workflow is a no-op); a confirmation is an Update whose result is the verdict, and whose failure
 * comes back as the domain error the activities threw (same class, code, kind, retryable).
 */
export async function createTemporalOrchestrator(options: TemporalOrchestratorOptions): Promise<TemporalOrchestrator> {
  if (!options.connection && !options.address) throw new Error('createTemporalOrchestrator needs an address or a connection');
  const connection = options.connection ?? (await Connection.connect({ address: options.address, tls: options.tls, apiKey: options.apiKey }));
  const client = new Client({ connection, namespace: options.namespace ?? 'default', interceptors: tracingClientInterceptors() });
  const taskQueue = options.taskQueue ?? LIFECYCLE_TASK_QUEUE;

  return {
    client,
    async startTrade(trade: StartedTrade) {
      const input: TradeWorkflowInput = {
        tradeId: trade.tradeId,
        adId: trade.adId,
        routeId: trade.routeId,
        reservationExpiresAt: trade.reservationExpiresAt.toISOString(),
        lockDeadline: trade.lockDeadline.toISOString(),
        proofsTaskQueue: options.proofsTaskQueue ?? PROOFS_TASK_QUEUE,
        ...(options.lingerMs === undefined ? {} : { lingerMs: options.lingerMs }),
        indexed: options.searchAttributes ?? true,
      };
      try {
        await connection.withDeadline(Date.now() + (options.startTimeoutMs ?? 5_000), () => client.workflow.start<typeof tradeWorkflow>('tradeWorkflow', {
          workflowId: tradeWorkflowId(trade.tradeId),
          taskQueue,
          args: [input],
          // One workflow per trade, ever: a repeated start never runs the lifecycle twice.
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          ...(input.indexed ? { searchAttributes: { TradeStatus: ['PENDING'], AdId: [trade.adId], RouteId: [trade.routeId] } } : {}),
        }));
      } catch (error) {
        if (error instanceof WorkflowExecutionAlreadyStartedError) return;
        throw unreachableAs503(error);
      }
    },

    async confirm(trade: ConfirmingTrade, confirmation: Confirmation): Promise<AppliedEvent> {
      // The workflow judges the transaction from its own state (the API's read may be behind it).
      try {
        return await client.workflow.getHandle(tradeWorkflowId(trade.tradeId)).executeUpdate(confirmUpdate, { args: [confirmation, trade.order] });
      } catch (error) {
        throw domainErrorOf(trade.tradeId, error);
      }
    },

    async close() {
      if (!options.connection) await connection.close();
    },
  };
}

/** What a failed Update means to the API: the domain error the workflow reported, or why nothing ran. */
function domainErrorOf(tradeId: string, error: unknown): unknown {
  if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) return fromApplicationFailure(error.cause);
  // The workflow finished and closed (its linger after SETTLED/EXPIRED is over), or never ran.
  if (error instanceof WorkflowNotFoundError || error instanceof WorkflowFailedError || isCompleted(error)) {
    return new TradeStateError(`trade ${tradeId} is no longer running: its lifecycle is over`);
  }
  return unreachableAs503(error);
}

/** A call the frontend did not answer (down, cut off, past its deadline) is "retry later", never a 500. */
function unreachableAs503(error: unknown): unknown {
  if (error instanceof ServiceError || isGrpcServiceError(error) || isGrpcDeadlineError(error)) {
    return new OrchestratorUnavailableError(`the trade orchestrator (Temporal) is unreachable: ${(error as Error).message}`, { cause: error });
  }
  return error;
}

function isCompleted(error: unknown): boolean {
  return error instanceof Error && /workflow execution already completed/i.test(error.message);
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
