import { createHash } from 'node:crypto';
import { startJobQueues } from '../../db/job-queues.ts';
import type { Logger } from 'pino';
import { followUpsOf, start, type FollowUp, type TimerEvent, type TradeEvent } from '../../trades/lifecycle.ts';
import type {
  AppliedEvent, ChainEventRef, Confirmation, ConfirmingTrade, Orchestrator, StartedTrade, TradeActivities,
} from '../../trades/orchestrator.ts';
import type { ResumableTrade } from '../../trades/resume.ts';

/** Queues of the embedded runner (pg-boss jobs in the service's own PostgreSQL). */
const QUEUES = {
  /** Produce the proof of a deposited trade, then mark it ready. */
  prove: 'trade-prove',
  /** Deliver a timer event (reservation expiry, lock window) to a trade. */
  timer: 'trade-timer',
} as const;

interface ProveJob { tradeId: string }
interface TimerJob { tradeId: string; event: TimerEvent }

export interface EmbeddedOrchestratorOptions {
  databaseUrl: string;
  activities: TradeActivities;
  logger: Logger;
  /** Open trades with what to carry out again after a restart (trades/resume.ts). */
  openTrades: () => Promise<ResumableTrade[]>;
  /** Observes each applied event (metrics). */
  onApplied?: (tradeId: string, applied: AppliedEvent, event: TradeEvent) => void | Promise<void>;
}

/**
 * The default orchestrator (`TEMPORAL_ADDRESS` unset). It decides nothing: it carries out the
 * machine's follow-ups (trades/lifecycle.ts) as durable pg-boss jobs in the same PostgreSQL:
 * `PROVE` on the in-process pool, `ARM_TIMER` as a job due at its time, `CANCEL_TIMER` by
 * cancelling that job. Confirmations are verified and applied in the caller's request. On start it
 * carries out every open trade's follow-ups again, so a restart resumes everything (a timer's job
 * id is derived from the trade and the timer, so arming it twice makes one job; the activities are
 * idempotent, so a step that ran twice counts once).
 */
export async function startEmbeddedOrchestrator(options: EmbeddedOrchestratorOptions): Promise<Orchestrator> {
  const { activities, logger } = options;
  const boss = await startJobQueues({
    databaseUrl: options.databaseUrl, max: 3, logger, label: 'trades',
    queues: Object.fromEntries(Object.values(QUEUES).map((name) => [name, { retryLimit: 10, retryDelay: 1, retryBackoff: true, expireInSeconds: 300 }])),
  });

  const carryOut = async (tradeId: string, followUps: FollowUp[]) => {
    for (const command of followUps) {
      if (command.type === 'PROVE') await boss.send(QUEUES.prove, { tradeId } satisfies ProveJob);
      if (command.type === 'ARM_TIMER') {
        await boss.send(QUEUES.timer, { tradeId, event: command.event } satisfies TimerJob, {
          startAfter: new Date(command.at), id: timerJobId(tradeId, command.event),
        });
      }
      if (command.type === 'CANCEL_TIMER') await boss.cancel(QUEUES.timer, timerJobId(tradeId, command.event));
    }
  };
  const apply = async (tradeId: string, event: TradeEvent, chainEvent?: ChainEventRef) => {
    const applied = await activities.applyEvent({ tradeId, event, chainEvent });
    await options.onApplied?.(tradeId, applied, event);
    await carryOut(tradeId, applied.followUps);
    return applied;
  };

  // How often workers look for due jobs: pg-boss's minimum.
  const pollingIntervalSeconds = 0.5;
  await boss.work<ProveJob>(QUEUES.prove, { pollingIntervalSeconds }, async ([job]) => {
    const { tradeId } = job!.data;
    await activities.generateProof({ tradeId });
    await apply(tradeId, { type: 'PROOF_READY' });
  });
  // A timer whose state is over by now is the machine's no-op (applied as `stale`).
  await boss.work<TimerJob>(QUEUES.timer, { pollingIntervalSeconds }, async ([job]) => {
    const { tradeId, event } = job!.data;
    await apply(tradeId, { type: event });
  });

  for (const trade of await options.openTrades()) await carryOut(trade.tradeId, trade.followUps);

  let closing: Promise<void> | undefined;
  return {
    async startTrade(trade: StartedTrade) {
      const deadlines = { reservationExpiresAt: trade.reservationExpiresAt.toISOString(), lockDeadline: trade.lockDeadline.toISOString() };
      await carryOut(trade.tradeId, followUpsOf(start().commands, deadlines));
    },
    async confirm(trade: ConfirmingTrade, confirmation: Confirmation) {
      const verified = await activities.verifyConfirmation({ tradeId: trade.tradeId, confirmation, state: trade.state, order: trade.order });
      return apply(trade.tradeId, verified.event, verified.chainEvent);
    },
    close: () => (closing ??= boss.stop({ graceful: true, wait: true, timeout: 10_000 })),
  };
}

/** The pg-boss job id of a trade's timer: the same trade and timer always give the same id. */
function timerJobId(tradeId: string, event: TimerEvent): string {
  const hex = createHash('sha256').update(`${tradeId}:${event}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
