import { createHash } from 'node:crypto';
import type PgBoss from 'pg-boss';
import { jobStates, jobsWithin, startJobQueues, valuesWithLiveJobs } from '../../db/job-queues.ts';
import { createJobWakes } from '../../db/job-wakes.ts';
import type { Logger } from 'pino';
import { runTracedJob, withTraceContext } from '../../telemetry/jobs.ts';
import { followUpsOf, start, timerLooksAgain, type TimerEvent, type TradeEvent } from '../../trades/lifecycle/index.ts';
import type {
  AppliedEvent, FollowUpOutbox, Orchestrator, StartedTrade, TradeActivities, TradeFollowUp,
} from '../../trades/orchestrator.ts';
import type { ResumableTrade } from '../../trades/orchestrator.ts';

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
  /** applyEvent (timers) and generateProof (proofs): confirmations are applied by the use cases, not here. */
  activities: Pick<TradeActivities, 'applyEvent' | 'generateProof'>;
  /** The follow-ups outbox: rows left pending by a process that stopped are carried out on start and on the resume schedule. */
  outbox: FollowUpOutbox;
  logger: Logger;
  /** Open trades with what to carry out again after a restart (trades/resume.ts). */
  openTrades: () => Promise<ResumableTrade[]>;
  /** Observes each applied event (metrics). */
  onApplied?: (tradeId: string, applied: AppliedEvent, event: TradeEvent) => void | Promise<void>;
  /**
   * How many proofs this process runs at once: the proof pool's size (one pg-boss worker each, and
   * one more that prepares the next proof meanwhile). Default 1.
   */
  proveConcurrency?: number;
  /** Observes each timer job re-created for an open trade because pg-boss had given it up (metrics). */
  onTimerRearmed?: (event: TimerEvent) => void;
  /**
   * How often open trades' timers and proofs are checked and any given up re-created (0: only on start).
   * Default 60 s.
   */
  resumeIntervalMs?: number;
  /**
   * How many times a failing job is retried before pg-boss marks it failed (backoff from 1 s
   * doubling; the default 10 spans about 17 minutes). Applies when the queues are first created.
   */
  jobRetryLimit?: number;
}

/**
 * The default orchestrator (`TEMPORAL_ADDRESS` unset). It decides nothing: it carries out the
 * machine's follow-ups (trades/lifecycle.ts) as durable pg-boss jobs in the same PostgreSQL:
 * `PROVE` on the in-process pool (`proveConcurrency` at once, the local workers woken at once), `ARM_TIMER` as a job due at its time, `CANCEL_TIMER` by
 * cancelling that job, each outbox row marked once its job is sent. Confirmations are verified and
 * applied by the use case, which hands their follow-ups to `carryOut`; a row whose process stopped
 * between the commit and carrying it out is found pending and carried out on start and on the
 * resume schedule. On start it
 * carries out every open trade's follow-ups again, so a restart resumes everything (a timer's job
 * id is derived from the trade and the timer, so arming it twice makes one job; the activities are
 * idempotent, so a step that ran twice counts once). Because that id is fixed, a timer job that
 * pg-boss gave up on (its retries spent in a long database or chain outage) or that was cancelled
 * would block its own re-arming until pg-boss archives it (12 h): so on start and then every
 * `resumeIntervalMs` each open trade's timer job is looked up and, when failed, cancelled or gone,
 * created again, and the reservation still expires; on the schedule, a proof under way with no
 * prove job left that will run is queued again, and a lock window the chain put off whose next
 * look is gone is looked at again.
 */
export async function startEmbeddedOrchestrator(options: EmbeddedOrchestratorOptions): Promise<Orchestrator> {
  const { activities, logger } = options;
  const boss = await startJobQueues({
    databaseUrl: options.databaseUrl, max: 3, logger, label: 'trades',
    queues: Object.fromEntries(Object.values(QUEUES).map((name) => [name, {
      retryLimit: options.jobRetryLimit ?? 10, retryDelay: 1, retryBackoff: true, expireInSeconds: 300,
    }])),
  });

  // A timer looked at again (`again`: the lock window still open on chain) is a job of its own,
  // named by its time: the fired job holds the timer's id until it completes.
  // This process wakes its timer worker when a timer it armed falls due (db/job-wakes.ts): the
  // worker's polls only find timers armed by another process, or retried by pg-boss.
  const wakes = createJobWakes(boss);
  const timerWorkers: string[] = [];
  const armTimer = (tradeId: string, event: TimerEvent, at: string, again?: true) =>
    carryOut(tradeId, [{ type: 'ARM_TIMER', event, at, ...(again ? { again } : {}) }]);
  const proveWorkers: string[] = [];
  const busyProveWorkers = new Set<string>();
  let proveTurn = 0;
  /**
   * One idle prove worker, in turn (two proofs queued together wake two): a proof needs one fetch, and
   * every other worker woken would only find the queue empty. None when all are busy: each looks again
   * as soon as its job is done.
   */
  const idleProveWorker = (): string[] => {
    const idle = proveWorkers.filter((id) => !busyProveWorkers.has(id));
    return idle.length === 0 ? [] : [idle[proveTurn++ % idle.length]!];
  };
  /** This process's workers told to look when the jobs of `followUps` are due (after they committed). */
  const wake = (followUps: readonly TradeFollowUp[]) => {
    for (const command of followUps) {
      // An idle prove worker looks now rather than at its next poll (up to PROVE_POLLING_SECONDS later).
      if (command.type === 'PROVE') wakes.at(idleProveWorker);
      if (command.type === 'ARM_TIMER') wakes.at(timerWorkers, new Date(command.at));
    }
  };
  /** The jobs of `followUps` sent and cancelled through `db` (pg-boss's own connection, or a transaction's). */
  const writeJobs = async (tradeId: string, followUps: readonly TradeFollowUp[], db?: PgBoss.Db) => {
    for (const command of followUps) {
      if (command.type === 'PROVE') await boss.send(QUEUES.prove, withTraceContext({ tradeId } satisfies ProveJob), db ? { db } : {});
      if (command.type === 'ARM_TIMER') {
        const { event, at, again } = command;
        await boss.send(
          QUEUES.timer,
          withTraceContext({ tradeId, event } satisfies TimerJob),
          { startAfter: new Date(at), id: timerJobId(tradeId, again ? `${event}@${at}` : event), ...(db ? { db } : {}) },
        );
      }
      if (command.type === 'CANCEL_TIMER') await boss.cancel(QUEUES.timer, timerJobId(tradeId, command.event), db ? { db } : {});
    }
  };
  const carryOut = async (tradeId: string, followUps: readonly TradeFollowUp[]) => {
    await writeJobs(tradeId, followUps);
    wake(followUps);
  };

  /**
   * Makes sure the timer each open trade's state needs will run: one query for their jobs, then a
   * job created for each that is gone, failed or cancelled (a finished job is deleted first: its
   * id is the timer's). A job waiting, retrying or running is left alone, and so is a completed
   * one (it fired; the machine decided). A timer re-armed for a trade that moved on meanwhile
   * fires as the machine's no-op. `onStart`: a waiting job (armed before this process started) is
   * given this process's wake at its time.
   */
  const rearmTimers = async (trades: ResumableTrade[], onStart = false) => {
    const timers = trades.flatMap(({ tradeId, followUps }) =>
      followUps.flatMap((f) => (f.type === 'ARM_TIMER' ? [{ tradeId, event: f.event, at: f.at, id: timerJobId(tradeId, f.event) }] : [])));
    const states = await jobStates(boss, QUEUES.timer, timers.map((t) => t.id));
    // A timer that fired and was put off (a lock window the chain had not closed) is looked at
    // again by a job of its own; one that pg-boss gave up on is made again, due now.
    const putOff = timers.filter((t) => timerLooksAgain(t.event) && states.get(t.id) === 'completed');
    const waiting = await valuesWithLiveJobs(boss, QUEUES.timer, 'tradeId', putOff.map((t) => t.tradeId));
    for (const timer of putOff.filter((t) => !waiting.has(t.tradeId))) {
      logger.warn({ tradeId: timer.tradeId, event: timer.event }, 'lock window put off with no look left; armed again');
      options.onTimerRearmed?.(timer.event);
      await armTimer(timer.tradeId, timer.event, new Date().toISOString(), true);
    }
    for (const timer of timers) {
      const state = states.get(timer.id);
      if (state !== undefined && state !== 'failed' && state !== 'cancelled') {
        if (onStart && (state === 'created' || state === 'retry')) wakes.at(timerWorkers, new Date(timer.at));
        continue;
      }
      if (state !== undefined) {
        await boss.deleteJob(QUEUES.timer, timer.id);
        logger.warn({ tradeId: timer.tradeId, event: timer.event, was: state }, 'timer job of an open trade was given up; armed again');
        options.onTimerRearmed?.(timer.event);
      }
      await armTimer(timer.tradeId, timer.event, timer.at);
    }
  };
  /** Carries out an applied event's follow-ups, then marks their outbox rows (a crash in between leaves them pending: carried out again, idempotently). */
  const settle = async (tradeId: string, applied: AppliedEvent) => {
    // Written in the event's own transaction (`carryOutWithin`): only the wakes are left.
    if (applied.carriedWithin) return wake(applied.followUps);
    await carryOut(tradeId, applied.followUps);
    await options.outbox.markCarriedOut(applied.outbox ?? []);
  };
  const apply = async (tradeId: string, event: TradeEvent) => {
    const applied = await activities.applyEvent({ tradeId, event });
    await options.onApplied?.(tradeId, applied, event);
    await settle(tradeId, applied);
    return applied;
  };
  /**
   * Carries out the rows left pending `olderThanMs` after they were written, grouped by trade in
   * order (a process stopped between an event's commit and its follow-ups).
   */
  const sweepOutbox = async (olderThanMs: number) => {
    const rows = await options.outbox.pending(olderThanMs);
    for (const row of rows) {
      logger.warn({ tradeId: row.tradeId, followUp: row.followUp }, 'follow-up left pending; carried out now');
      await carryOut(row.tradeId, [row.followUp]);
    }
    await options.outbox.markCarriedOut(rows.map((row) => row.seq));
  };

  // A pg-boss worker that finished a job waits out the rest of its polling interval before it
  // looks again, though more jobs wait (a proof shorter than the interval left the pool idle
  // between proofs of a backlog): each worker is told to look again at once after every job, so
  // it polls only when the queue was empty.
  // `busy`: the workers with a job in hand, for the wakes to pass over.
  const workAndLookAgain = async <T extends object>(
    queue: string, pollingIntervalSeconds: number, run: (data: T) => Promise<void>, busy?: Set<string>,
  ) => {
    let id = '';
    id = await boss.work<T>(queue, { pollingIntervalSeconds }, async ([job]) => {
      busy?.add(id);
      try {
        await run(job!.data);
      } finally {
        busy?.delete(id);
        boss.notifyWorker(id);
      }
    });
    return id;
  };
  // One worker per proof the pool runs at once, and one more: a pg-boss worker takes one job at a
  // time, and a job spends part of its time outside the pool (reading the trade, syncing the tree,
  // applying the result), so the extra one prepares the next proof while the pool proves. Proofs
  // queued in this process wake its workers (`carryOut`), so their polls (each a query, idle or
  // not) only find another process's proofs (or pg-boss's retries): the first worker every
  // PROVE_POLLING_SECONDS, the others seldom (a proof of this process wakes one idle worker, in turn).
  for (let i = 0; i < Math.max(1, options.proveConcurrency ?? 1) + 1; i++) {
    proveWorkers.push(await workAndLookAgain<ProveJob>(QUEUES.prove, i === 0 ? PROVE_POLLING_SECONDS : SPARE_PROVE_POLLING_SECONDS, async (data) => {
      const { tradeId } = data;
      await runTracedJob(QUEUES.prove, data, async () => {
        // The proof and PROOF_READY in one transaction (trades/applier/prove-step.ts).
        const applied = await activities.generateProof({ tradeId });
        await options.onApplied?.(tradeId, applied, { type: 'PROOF_READY' });
        await settle(tradeId, applied);
      });
    }, busyProveWorkers));
  }
  // A timer whose state is over by now is the machine's no-op (applied as `stale`). Timer jobs
  // become due by the clock, which wakes nobody: this process wakes the worker at the times of the
  // timers it arms, and the worker polls every TIMER_POLLING_SECONDS for the others.
  timerWorkers.push(await workAndLookAgain<TimerJob>(QUEUES.timer, TIMER_POLLING_SECONDS, async (data) => {
    const { tradeId, event } = data;
    await runTracedJob(QUEUES.timer, data, () => apply(tradeId, { type: event }));
  }));

  /**
   * Queues the proof again of each open trade whose proof is under way but has no prove job that
   * will still run (pg-boss gave it up: its retries spent in an outage). One query; a proof that
   * finished meanwhile is skipped by the activity (the proof is stored) and applied as a duplicate.
   */
  const requeueProofs = async (trades: ResumableTrade[]) => {
    const proving = trades.filter((t) => t.followUps.some((f) => f.type === 'PROVE')).map((t) => t.tradeId);
    const live = await valuesWithLiveJobs(boss, QUEUES.prove, 'tradeId', proving);
    for (const tradeId of proving.filter((id) => !live.has(id))) {
      logger.warn({ tradeId }, 'proof of an open trade had no job left; queued again');
      await carryOut(tradeId, [{ type: 'PROVE' }]);
    }
  };
  const resumeOnSchedule = async () => {
    await sweepOutbox(OUTBOX_GRACE_MS);
    const trades = await options.openTrades();
    await rearmTimers(trades);
    await requeueProofs(trades);
  };

  // Rows of a process that stopped: carried out before the open trades' timers are looked at.
  await sweepOutbox(0);
  const opened = await options.openTrades();
  await rearmTimers(opened, true);
  // A proof under way when the process stopped: its job may be held active by the dead process until it expires.
  for (const trade of opened) await carryOut(trade.tradeId, trade.followUps.filter((f) => f.type === 'PROVE'));

  const resumeIntervalMs = options.resumeIntervalMs ?? 60_000;
  let resumeTimer: NodeJS.Timeout | undefined;
  let resumePass: Promise<void> = Promise.resolve();
  let stopped = false;
  const scheduleResume = () => {
    if (stopped || resumeIntervalMs <= 0) return;
    resumeTimer = setTimeout(() => {
      resumePass = resumeOnSchedule()
        .catch((error: unknown) => logger.warn({ err: error }, 're-arming open trades\' timers and proofs failed; retrying next interval'))
        .finally(scheduleResume);
    }, resumeIntervalMs);
    // The schedule alone never keeps a process alive.
    resumeTimer.unref();
  };
  scheduleResume();

  let closing: Promise<void> | undefined;
  return {
    async startTrade(trade: StartedTrade) {
      const deadlines = { reservationExpiresAt: trade.reservationExpiresAt.toISOString(), lockDeadline: trade.lockDeadline.toISOString() };
      await carryOut(trade.tradeId, followUpsOf(start().commands, deadlines));
    },
    async carryOut(trade: StartedTrade, applied: AppliedEvent) {
      await settle(trade.tradeId, applied);
    },
    async carryOutWithin(trx, tradeId, followUps) {
      await writeJobs(tradeId, followUps, await jobsWithin(trx));
    },
    close: () => (closing ??= (async () => {
      stopped = true;
      clearTimeout(resumeTimer);
      wakes.close();
      await resumePass;
      await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
    })()),
  };
}

/** How often a prove worker polls for proofs queued by another process (this process's wake its workers at once). */
const PROVE_POLLING_SECONDS = 2;
/** How often the other prove workers poll: another process's backlog is taken one proof at a time by the first until they look. */
const SPARE_PROVE_POLLING_SECONDS = 10;

/**
 * How often the timer worker polls for due timers this process did not arm (another process's, or
 * one pg-boss retries after a failure): the ones it armed wake it when due.
 */
const TIMER_POLLING_SECONDS = 2;

/** How long a pending outbox row is left to the request that wrote it before the schedule carries it out. */
const OUTBOX_GRACE_MS = 30_000;

/** The pg-boss job id of a trade's timer (`name`: the timer's event, or event@time for a look again): the same trade and name always give the same id. */
function timerJobId(tradeId: string, name: string): string {
  const hex = createHash('sha256').update(`${tradeId}:${name}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
