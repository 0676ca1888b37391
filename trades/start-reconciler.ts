import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { claimDueTradeStarts, clearTradeStart, findTradeStart, noteTradeStartFailure } from '../db/repositories/trade-starts.ts';
import type { Orchestrator, StartedTrade } from './orchestrator.ts';

/** Who started a trade's lifecycle: the creating request, a confirm that found none, or the reconciler. */
export type StartedBy = 'request' | 'confirm' | 'reconciler';

export interface TradeStartsDeps {
  knex: Knex;
  orchestrator: () => Orchestrator;
  logger: Logger;
  /** Observes each start attempt (trade metrics). */
  onAttempt?: (by: StartedBy, outcome: 'started' | 'failed') => void;
  /** How often the reconciler looks for starts left behind (0: never on a schedule). */
  intervalMs: number;
  /** How long a claimed row is left to its claimant before another reconciler may try it (default 30 s). */
  leaseSeconds?: number;
}

export interface TradeStarts {
  /**
   * Hands a trade whose reservation just committed to the orchestrator and clears its outbox row.
   * Never throws: when the orchestrator cannot take it now, the row stays and the reconciler starts
   * it later. Resolves true when it started.
   */
  start(trade: StartedTrade, by?: StartedBy): Promise<boolean>;
  /** Counts a start the orchestrator made inside the reservation's own transaction (`Orchestrator.carryOutWithin`): no outbox row to clear. */
  startedWithin(by?: StartedBy): void;
  /**
   * Starts the trade now if its start is still pending (the orchestrator knew nothing of it).
   * Resolves true when it did, false when nothing was pending; throws the orchestrator's error
   * (OrchestratorUnavailableError while it is unreachable).
   */
  startIfPending(tradeId: string): Promise<boolean>;
  /** Starts every pending start that is due (oldest first, in batches); resolves with how many started and failed. */
  reconcileOnce(): Promise<{ started: number; failed: number }>;
  /** Reconciles once now, then every `intervalMs` until `stop`. */
  run(): void;
  /** Stops the schedule and waits for a pass in progress. */
  stop(): Promise<void>;
}

const BATCH = 100;

/**
 * The durable start of trades (the start outbox): the reservation and the intent to start commit
 * together (`recordTradeStart` in the create transaction); whoever gets to it first (the request
 * right after commit, a confirm that finds no lifecycle, or this reconciler, on start and on a
 * schedule) starts it. Starting is idempotent on the trade id (Temporal: the workflow id;
 * embedded: a repeated timer finds the trade moved on), so two that race do no harm.
 */
export function createTradeStarts(deps: TradeStartsDeps): TradeStarts {
  const { knex, logger } = deps;
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<unknown> = Promise.resolve();
  let stopped = false;
  let scheduled = false;

  async function attempt(trade: StartedTrade, by: StartedBy): Promise<void> {
    try {
      await deps.orchestrator().startTrade(trade);
    } catch (error) {
      deps.onAttempt?.(by, 'failed');
      await noteTradeStartFailure(knex, trade.tradeId, error instanceof Error ? error.message : String(error)).catch(() => undefined);
      throw error;
    }
    deps.onAttempt?.(by, 'started');
    await clearTradeStart(knex, trade.tradeId);
  }

  async function reconcileOnce() {
    let started = 0;
    let failed = 0;
    for (;;) {
      const due = await claimDueTradeStarts(knex, BATCH, deps.leaseSeconds ?? 30);
      for (const trade of due) {
        try {
          await attempt(trade, 'reconciler');
          started++;
        } catch (error) {
          failed++;
          logger.warn({ err: error, tradeId: trade.tradeId, attempts: trade.attempts }, 'could not start a trade left behind; retrying after its lease');
        }
      }
      // A failing orchestrator fails the whole batch: wait for the next pass rather than spin.
      if (due.length < BATCH || failed > 0 || stopped) break;
    }
    if (started > 0) logger.info({ started }, 'started trades whose start was left behind');
    return { started, failed };
  }

  function schedule() {
    if (stopped || deps.intervalMs <= 0) return;
    timer = setTimeout(() => {
      pass = reconcileOnce().catch((error: unknown) => logger.warn(
        { err: error },
        'trade start reconciliation failed; retrying next interval',
      )).finally(schedule);
    }, deps.intervalMs);
    // The schedule alone never keeps a process alive.
    timer.unref();
  }

  return {
    async start(trade, by = 'request') {
      try {
        await attempt(trade, by);
        return true;
      } catch (error) {
        logger.warn({ err: error, tradeId: trade.tradeId }, 'trade reserved but its lifecycle not started yet; the reconciler will start it');
        return false;
      }
    },
    startedWithin(by = 'request') {
      deps.onAttempt?.(by, 'started');
    },
    async startIfPending(tradeId) {
      const pending = await findTradeStart(knex, tradeId);
      if (!pending) return false;
      await attempt(pending, 'confirm');
      return true;
    },
    reconcileOnce,
    run() {
      if (scheduled || stopped) return;
      scheduled = true;
      pass = reconcileOnce().catch((error: unknown) => logger.warn(
        { err: error },
        'trade start reconciliation failed; retrying next interval',
      )).finally(schedule);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await pass;
    },
  };
}
