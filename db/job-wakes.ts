import type PgBoss from 'pg-boss';

/** setTimeout's longest delay (about 24.8 days); a job due later is left to its workers' polls. */
const LONGEST_DELAY_MS = 2 ** 31 - 1;
/** How long after a job's due time its workers are woken (start_after is compared with `now()` in PostgreSQL, strictly). */
const WAKE_SLACK_MS = 20;

/** Wakes this process's pg-boss workers when a job it queued falls due. */
export interface JobWakes {
  /**
   * Tells `workerIds` to look for jobs at `at` (now when absent or past); given as a function, the
   * workers are chosen when the job falls due (an idle one then).
   */
  at(workerIds: readonly string[] | (() => readonly string[]), at?: Date): void;
  /** Drops the wakes not yet due. */
  close(): void;
}

/**
 * A pg-boss worker finds a job by polling, and a job due later (a timer, a retry's backoff) wakes
 * nobody: polling often enough to run such jobs on time is a query per worker every fraction of a
 * second, most of a quiet service's statements. The process that queues a job knows when it is due,
 * so it wakes its own workers then, and their polls only find jobs queued by another process (or
 * retried by pg-boss itself) and can be seconds apart. The wakes are timers of this process (unref'd:
 * they never keep it alive); a process that stops loses them and the jobs wait for a poll, anyone's.
 */
export function createJobWakes(boss: Pick<PgBoss, 'notifyWorker'>): JobWakes {
  const pending = new Set<NodeJS.Timeout>();
  const wake = (workerIds: readonly string[] | (() => readonly string[])) => {
    for (const id of typeof workerIds === 'function' ? workerIds() : workerIds) boss.notifyWorker(id);
  };
  return {
    at(workerIds, at) {
      const delay = at ? at.getTime() - Date.now() : 0;
      if (delay <= 0) return wake(workerIds);
      if (delay > LONGEST_DELAY_MS) return;
      // A little after the due time: pg-boss compares start_after with the database's clock.
      const timer = setTimeout(() => {
        pending.delete(timer);
        wake(workerIds);
      }, delay + WAKE_SLACK_MS);
      timer.unref();
      pending.add(timer);
    },
    close() {
      for (const timer of pending) clearTimeout(timer);
      pending.clear();
    },
  };
}
