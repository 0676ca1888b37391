import { WorkflowNotFoundError } from '@temporalio/client';
import type { Logger } from 'pino';
import type { TradeStatus } from '../../domain/index.ts';
import { INITIAL_STATE, type TradeState } from '../../trades/lifecycle/index.ts';
import type { RestorableTrade } from '../../trades/orchestrator.ts';
import type { TemporalOrchestrator } from './client.ts';
import { reconcileAction, type ReconcileAction, type WorkflowView } from './reconcile-plan.ts';
import { followUpsSignal, stateQuery, tradeWorkflowId } from './workflows.ts';

/** One trade compared: what the database holds, what Temporal runs, and what was done about it. */
export interface ReconciledTrade {
  tradeId: string;
  /** The trade's status in the database, or `missing`. */
  database: TradeStatus | 'missing';
  /** The status of its latest workflow run (`RUNNING`, `COMPLETED`, ...), or `missing`. */
  workflow: string;
  /** The trade status the running workflow last saw, when known. */
  workflowTradeStatus?: string;
  action: ReconcileAction;
  /** Set when the action failed (the others still ran); the command exits non-zero. */
  error?: string;
}

export interface ReconcileDeps {
  orchestrator: TemporalOrchestrator;
  /** Every open trade in the database (trades/resume.ts `restorableTrades`). */
  openTrades: () => Promise<RestorableTrade[]>;
  /** A trade's state in the database, open or over; undefined when it holds no such trade (`storedTradeState`). */
  storedState: (tradeId: string) => Promise<TradeState | undefined>;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** Report only: compare and say what would be done, change nothing. */
  dryRun?: boolean;
  /**
   * The task queue of this deployment's trade workflows (TEMPORAL_TASK_QUEUE): only running workflows
   * on it are judged, so another deployment's in a shared namespace are never terminated as unknown.
   */
  taskQueue: string;
}

/** Workflow ids of trade workflows are `trade-<uuid>`; anything else in the namespace is not ours to judge. */
const TRADE_WORKFLOW_ID = /^trade-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/**
 * Brings Temporal in line with the database, which is the record (after a restore, the restored
 * one): every open trade gets a running workflow carrying out its state's timers and proof, and no
 * workflow keeps running for a trade the database holds finished or does not hold. Compares every
 * open trade with its workflow, and every running trade workflow with its trade, then acts
 * (`reconcileAction`). Idempotent: a second pass over an unchanged database finds nothing to do.
 * Resolves one row per trade compared, actions `none` included.
 */
export async function reconcileTemporalTrades(deps: ReconcileDeps): Promise<ReconciledTrade[]> {
  const { orchestrator } = deps;
  const client = orchestrator.client;
  const rows: ReconciledTrade[] = [];
  const open = new Map((await deps.openTrades()).map((trade) => [trade.trade.tradeId, trade]));

  for (const restorable of open.values()) {
    const tradeId = restorable.trade.tradeId;
    const workflow = await viewOf(orchestrator, tradeId);
    const action = reconcileAction(restorable.state.status, workflow);
    rows.push(await carryOut(deps, { tradeId, database: restorable.state.status, workflow, action }, () => orchestrator.resume(restorable)));
  }

  if (!/^[\w.-]+$/.test(deps.taskQueue)) throw new Error(`taskQueue must be a plain queue name, received '${deps.taskQueue}'`);
  const running = client.workflow.list({ query: `WorkflowType = 'tradeWorkflow' AND ExecutionStatus = 'Running' AND TaskQueue = '${deps.taskQueue}'` });
  for await (const execution of running) {
    const tradeId = TRADE_WORKFLOW_ID.exec(execution.workflowId)?.[1]?.toLowerCase();
    if (!tradeId || open.has(tradeId)) continue;
    const state = await deps.storedState(tradeId);
    const workflow = await viewOf(orchestrator, tradeId);
    const action = reconcileAction(state?.status, workflow);
    const handle = client.workflow.getHandle(tradeWorkflowId(tradeId));
    rows.push(await carryOut(deps, { tradeId, database: state?.status ?? 'missing', workflow, action }, async () => {
      if (action === 'terminate') {
        await handle.terminate('reconcile: the database holds no such trade (created after the restored backup point)');
      } else if (action === 'end' && state) {
        await handle.signal(followUpsSignal, { followUps: [{ type: 'END' }], state });
      }
    }));
  }
  return rows;
}

/** The trade's workflow: its status and, while it runs, the trade status it last saw. */
async function viewOf(orchestrator: TemporalOrchestrator, tradeId: string): Promise<WorkflowView> {
  const handle = orchestrator.client.workflow.getHandle(tradeWorkflowId(tradeId));
  let described;
  try {
    described = await handle.describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return { status: 'missing' };
    throw error;
  }
  const status = described.status.name;
  if (status !== 'RUNNING') return { status };
  // Only its start in the history (a start delayed to the reservation's expiry, no signal yet):
  // the workflow has seen nothing but its input, and will begin in the initial state. A query
  // would wait for a task the server holds back.
  if (described.historyLength <= 1) return { status, tradeStatus: INITIAL_STATE.status };
  const indexed = described.searchAttributes.TradeStatus?.[0];
  if (typeof indexed === 'string') return { status, tradeStatus: indexed };
  // Without the search attribute (a namespace that cannot register it): ask the workflow, briefly;
  // unknown means the action is re-sent, which is harmless.
  try {
    const state = await orchestrator.client.connection.withDeadline(Date.now() + 5_000, () => handle.query(stateQuery));
    return { status, tradeStatus: state.status };
  } catch {
    return { status };
  }
}

async function carryOut(
  deps: ReconcileDeps,
  compared: { tradeId: string; database: TradeStatus | 'missing'; workflow: WorkflowView; action: ReconcileAction },
  act: () => Promise<void>,
): Promise<ReconciledTrade> {
  const row: ReconciledTrade = {
    tradeId: compared.tradeId,
    database: compared.database,
    workflow: compared.workflow.status,
    ...(compared.workflow.tradeStatus ? { workflowTradeStatus: compared.workflow.tradeStatus } : {}),
    action: compared.action,
  };
  if (compared.action === 'none' || deps.dryRun) return row;
  try {
    await act();
    deps.logger.info({ tradeId: row.tradeId, database: row.database, workflow: row.workflow, action: row.action }, 'reconciled a trade with its workflow');
  } catch (error) {
    row.error = error instanceof Error ? error.message : String(error);
    deps.logger.warn({ err: error, tradeId: row.tradeId, action: row.action }, 'could not reconcile a trade with its workflow');
  }
  return row;
}
