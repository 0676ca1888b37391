import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import { TradeStateError } from '../../trades/lifecycle-errors.ts';
import type { TradeCommand, TradeEvent } from '../../trades/lifecycle.ts';
import type { AppliedEvent, Confirmation, Orchestrator, StartedTrade, TradeActivities } from '../../trades/orchestrator.ts';

/** Queues of the embedded runner (pg-boss jobs in the service's own PostgreSQL). */
const QUEUES = {
  /** Produce the proof of a deposited trade, then mark it ready. */
  prove: 'trade-prove',
  /** Deliver a timer event (reservation expiry, lock window) to a trade. */
  timer: 'trade-timer',
} as const;

interface ProveJob { tradeId: string }
interface TimerJob { tradeId: string; event: 'RESERVATION_EXPIRED' | 'LOCK_WINDOW_CLOSED' }

export interface EmbeddedOrchestratorOptions {
  databaseUrl: string;
  activities: TradeActivities;
  logger: Logger;
  /** Trades that may still move, as (tradeId, timers) to re-arm and proofs to re-run after a restart. */
  openTrades: () => Promise<Array<StartedTrade & { proofPending: boolean; deposited: boolean }>>;
  /** The trade's lock deadline, armed as a timer once its deposit is confirmed. */
  lockDeadlineOf: (tradeId: string) => Promise<Date>;
  /** Observes each applied event (metrics). */
  onApplied?: (tradeId: string, applied: AppliedEvent, event: TradeEvent) => void;
  /** How often workers look for due jobs (pg-boss's minimum is 0.5 s). */
  pollingIntervalSeconds?: number;
}

/**
 * The default orchestrator (`TEMPORAL_ADDRESS` unset): the trade machine's follow-up steps run as
 * durable pg-boss jobs in the same PostgreSQL, proofs on the in-process pool. Confirmations are
 * verified and applied in the caller's request; timers are jobs due at their time. On start it
 * re-arms every open trade's timers and re-runs every unfinished proof, so a restart resumes
 * everything (the activities are idempotent, so a step that ran twice counts once).
 */
export async function startEmbeddedOrchestrator(options: EmbeddedOrchestratorOptions): Promise<Orchestrator> {
  const { activities, logger } = options;
  const boss = new PgBoss({ connectionString: options.databaseUrl, schema: 'pgboss', max: 3 });
  boss.on('error', (error) => logger.error({ err: error }, 'pg-boss error'));
  await boss.start();
  for (const name of Object.values(QUEUES)) await boss.createQueue(name, { name, retryLimit: 10, retryDelay: 1, retryBackoff: true, expireInSeconds: 300 });

  const apply = async (tradeId: string, event: TradeEvent, chainEvent?: Parameters<TradeActivities['applyEvent']>[0]['chainEvent']) => {
    const applied = await activities.applyEvent({ tradeId, event, chainEvent });
    options.onApplied?.(tradeId, applied, event);
    await followUp(tradeId, applied.followUps);
    return applied;
  };
  const followUp = async (tradeId: string, commands: TradeCommand[]) => {
    for (const command of commands) if (command.type === 'PROVE') await boss.send(QUEUES.prove, { tradeId } satisfies ProveJob);
  };
  const arm = async (tradeId: string, event: TimerJob['event'], at: Date) => {
    await boss.send(QUEUES.timer, { tradeId, event } satisfies TimerJob, { startAfter: at });
  };

  const pollingIntervalSeconds = options.pollingIntervalSeconds ?? 0.5;
  await boss.work<ProveJob>(QUEUES.prove, { pollingIntervalSeconds }, async ([job]) => {
    const { tradeId } = job!.data;
    await activities.generateProof({ tradeId });
    await apply(tradeId, { type: 'PROOF_READY' });
  });
  await boss.work<TimerJob>(QUEUES.timer, { pollingIntervalSeconds }, async ([job]) => {
    const { tradeId, event } = job!.data;
    try {
      await apply(tradeId, { type: event });
    } catch (error) {
      // The trade moved on (deposited, locked): the timer no longer applies.
      if (error instanceof TradeStateError) return;
      throw error;
    }
  });

  // Resume: every open trade gets its timers again and every unfinished proof runs again.
  for (const trade of await options.openTrades()) {
    if (!trade.deposited) await arm(trade.tradeId, 'RESERVATION_EXPIRED', trade.reservationExpiresAt);
    else await arm(trade.tradeId, 'LOCK_WINDOW_CLOSED', trade.lockDeadline);
    if (trade.proofPending) await boss.send(QUEUES.prove, { tradeId: trade.tradeId } satisfies ProveJob);
  }

  let closing: Promise<void> | undefined;
  return {
    async startTrade(trade: StartedTrade) {
      await arm(trade.tradeId, 'RESERVATION_EXPIRED', trade.reservationExpiresAt);
    },
    async confirm(tradeId: string, confirmation: Confirmation) {
      const verified = await activities.verifyConfirmation({ tradeId, confirmation });
      const applied = await apply(tradeId, verified.event, verified.chainEvent);
      if (!applied.duplicate && verified.event.type === 'DEPOSIT_CONFIRMED') {
        await arm(tradeId, 'LOCK_WINDOW_CLOSED', await options.lockDeadlineOf(tradeId));
      }
      return applied;
    },
    close: () => (closing ??= boss.stop({ graceful: true, wait: true, timeout: 10_000 })),
  };
}
