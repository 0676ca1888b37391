import { OPEN_TRADE_STATUSES, type TradeStatus } from '../../domain/index.ts';

/**
 * What reconciling one trade does:
 * - `none`: the database and the workflow agree (a workflow runs for the open trade in the same
 *   status; a finished trade's workflow of a version that lingers after END (V1, V2) still runs
 *   with the finished status; neither runs);
 * - `start`: an open trade with no workflow at all: one is started, resumed from the database;
 * - `restart`: an open trade whose workflow closed (the database was restored to before it
 *   closed, or it was terminated): a new run of the same id, resumed from the database;
 * - `signal`: an open trade whose running workflow saw another status (it ran past the restored
 *   point): it is sent the database's state and its timers and proof again;
 * - `end`: a finished trade whose workflow still waits on an open status: it is sent the finished
 *   state, so it ends;
 * - `terminate`: a running workflow of a trade the database does not hold (created after the
 *   restored backup point): nothing is left for it to carry out.
 */
export type ReconcileAction = 'none' | 'start' | 'restart' | 'signal' | 'end' | 'terminate';

/** The trade's latest workflow run as Temporal describes it. */
export interface WorkflowView {
  /** `RUNNING`, a closed status (`COMPLETED`, `TERMINATED`, `FAILED`, `CANCELLED`, `TIMED_OUT`, `CONTINUED_AS_NEW`), or `missing`. */
  status: string;
  /**
   * The trade status the running workflow last saw (its TradeStatus search attribute, or, for a
   * workflow that sets it only at its end, its state query: the state last sent to it); undefined
   * when unknown. A status it was not sent (a lock, which signals nothing) makes the action
   * `signal`, which only sends the database's state again.
   */
  tradeStatus?: string;
}

const isOpen = (status: TradeStatus) => (OPEN_TRADE_STATUSES as readonly TradeStatus[]).includes(status);

/** The action that brings the trade's workflow in line with the database (`undefined`: the database has no such trade). */
export function reconcileAction(database: TradeStatus | undefined, workflow: WorkflowView): ReconcileAction {
  const running = workflow.status === 'RUNNING';
  if (database === undefined) return running ? 'terminate' : 'none';
  if (isOpen(database)) {
    if (workflow.status === 'missing') return 'start';
    if (!running) return 'restart';
    return workflow.tradeStatus === database ? 'none' : 'signal';
  }
  if (!running) return 'none';
  return workflow.tradeStatus === database ? 'none' : 'end';
}
