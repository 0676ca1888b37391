import { describe, expect, it } from 'vitest';
import { OPEN_TRADE_STATUSES, TRADE_STATUSES, type TradeStatus } from '../../domain/index.ts';
import { reconcileAction } from './reconcile-plan.ts';

const CLOSED = ['COMPLETED', 'TERMINATED', 'FAILED', 'CANCELLED', 'TIMED_OUT', 'CONTINUED_AS_NEW'];
const isOpen = (status: TradeStatus) => (OPEN_TRADE_STATUSES as readonly string[]).includes(status);

/** Every database status (and none) against every workflow status and every status a running workflow may have seen. */
describe('what reconciling a trade does', () => {
  it('starts a workflow for an open trade that has none, and restarts one whose workflow closed', () => {
    for (const status of OPEN_TRADE_STATUSES) {
      expect(reconcileAction(status, { status: 'missing' })).toBe('start');
      for (const closed of CLOSED) expect(reconcileAction(status, { status: closed })).toBe('restart');
    }
  });

  it('leaves a running workflow that saw the database status alone, and signals one that saw another or is unknown', () => {
    for (const status of OPEN_TRADE_STATUSES) {
      expect(reconcileAction(status, { status: 'RUNNING', tradeStatus: status })).toBe('none');
      expect(reconcileAction(status, { status: 'RUNNING' })).toBe('signal');
      for (const seen of TRADE_STATUSES.filter((s) => s !== status)) expect(reconcileAction(status, { status: 'RUNNING', tradeStatus: seen })).toBe('signal');
    }
  });

  it('ends the running workflow of a finished trade unless it already saw it finish (it lingers), and leaves closed ones alone', () => {
    for (const status of TRADE_STATUSES.filter((s) => !isOpen(s))) {
      expect(reconcileAction(status, { status: 'RUNNING', tradeStatus: status })).toBe('none');
      for (const seen of TRADE_STATUSES.filter((s) => s !== status)) expect(reconcileAction(status, { status: 'RUNNING', tradeStatus: seen })).toBe('end');
      for (const closed of [...CLOSED, 'missing']) expect(reconcileAction(status, { status: closed })).toBe('none');
    }
  });

  it('terminates a running workflow of a trade the database does not hold, and nothing else of such a trade', () => {
    expect(reconcileAction(undefined, { status: 'RUNNING', tradeStatus: 'PENDING' })).toBe('terminate');
    expect(reconcileAction(undefined, { status: 'RUNNING' })).toBe('terminate');
    for (const closed of [...CLOSED, 'missing']) expect(reconcileAction(undefined, { status: closed })).toBe('none');
  });

  it('acts at most once: every action leaves a pair the next pass calls none', () => {
    // What each action leaves: a running workflow that saw the database status (start, restart,
    // signal, end), or no running workflow (terminate).
    for (const database of [...TRADE_STATUSES, undefined]) {
      for (const workflow of [{ status: 'missing' }, ...CLOSED.map((status) => ({ status })), { status: 'RUNNING' },
        ...TRADE_STATUSES.map((tradeStatus) => ({ status: 'RUNNING', tradeStatus }))]) {
        const action = reconcileAction(database, workflow);
        const after = action === 'none' ? workflow : action === 'terminate' ? { status: 'TERMINATED' } : { status: 'RUNNING', tradeStatus: database };
        expect(reconcileAction(database, after), `${database} / ${JSON.stringify(workflow)} -> ${action}`).toBe('none');
      }
    }
  });
});
