import type { Knex } from 'knex';
import { startJobQueues } from '../db/job-queues.ts';
import { createJobWakes } from '../db/job-wakes.ts';
import type { Logger } from 'pino';
import { listenForPushedEvents } from '../db/event-notifications.ts';
import { userEventsAfter } from '../db/repositories/pushed-events.ts';
import { pushedEventJson } from '../domain/index.ts';
import {
  activeEndpointIdsOf, endpointIsBehind, endpointsBehind, findWebhookEndpoint, leaseWebhookEndpoint, recordAttempt,
  releaseWebhookLease, type WebhookEndpointRecord,
} from '../db/repositories/webhooks.ts';
import { postWebhook } from './http-delivery.ts';
import type { WebhookMetrics } from './metrics.ts';
import { signedHeaders } from './signing.ts';

/** The pg-boss queue of webhook work: "deliver what endpoint X lacks", due now or at its next retry. */
const QUEUE = 'webhook-deliver';
/** Workers taking jobs from it in one process. */
const WORKERS = 4;
/**
 * How often the first worker polls the queue. A job this process queues (a retry at its backoff) wakes
 * an idle worker when due; the polls only find another process's jobs and pg-boss's own retries, and
 * the sweep finds endpoints left behind whatever happened to their job.
 */
const POLLING_SECONDS = 5;
/** How often the other workers poll: they take part in another process's backlog once they look. */
const SPARE_POLLING_SECONDS = 30;

export interface WebhookDeliverySettings {
  /** One attempt's whole time (WEBHOOK_TIMEOUT_SECONDS). */
  timeoutSeconds: number;
  /** Only public addresses (production). */
  publicOnly: boolean;
  /** Backoff after the n-th failure in a row: min(max, base * 2^(n-1)), then scaled by a random 0.5..1 (jitter). */
  retryBaseSeconds: number;
  retryMaxSeconds: number;
  /** Disabled once failing this many times in a row and for at least this long. */
  disableAfterFailures: number;
  disableAfterSeconds: number;
  /** How often endpoints that are behind are looked for (a lost notice, a crashed worker). */
  sweepSeconds: number;
}

export interface WebhookDispatcherOptions {
  databaseUrl: string;
  knex: Knex;
  logger: Logger;
  settings: WebhookDeliverySettings;
  /** Jitter source (tests seed it). */
  random?: () => number;
  metrics?: WebhookMetrics;
}

export interface WebhookDispatcher {
  close(): Promise<void>;
}

/** The delay before the next attempt after `failures` failures in a row, jittered. */
export function retryDelayMs(failures: number, settings: Pick<WebhookDeliverySettings, 'retryBaseSeconds' | 'retryMaxSeconds'>, random: () => number): number {
  const ceiling = Math.min(settings.retryMaxSeconds, settings.retryBaseSeconds * 2 ** Math.min(failures - 1, 30));
  return Math.round(ceiling * 1000 * (0.5 + random() / 2));
}

/**
 * Delivers each user's feed to their webhook endpoints, in feed order (so in order per trade), at
 * least once: the position of each endpoint is in PostgreSQL and only moves past an event once the
 * receiver answered 2xx. A commit's NOTIFY starts delivery at once; a failure schedules a durable
 * pg-boss job at the next retry time; a periodic sweep picks up endpoints left behind (a notice lost
 * while LISTEN reconnected, a process killed mid-delivery). A lease per endpoint keeps one deliverer
 * at a time across processes.
 */
export async function startWebhookDispatcher(options: WebhookDispatcherOptions): Promise<WebhookDispatcher> {
  const { knex, logger, settings } = options;
  const random = options.random ?? Math.random;
  const leaseSeconds = settings.timeoutSeconds + 30;
  const boss = await startJobQueues({
    databaseUrl: options.databaseUrl, max: 2, logger, label: 'webhooks',
    queues: { [QUEUE]: { retryLimit: 10, retryDelay: 1, retryBackoff: true, expireInSeconds: 15 * 60 } },
  });
  let closed = false;
  const running = new Set<Promise<void>>();

  const wakes = createJobWakes(boss);
  const workers: string[] = [];
  const busy = new Set<string>();
  let turn = 0;
  /** One worker to wake for a job: an idle one in turn (a busy one looks again after its job). */
  const nextWorker = () => {
    const idle = workers.filter((id) => !busy.has(id));
    const from = idle.length > 0 ? idle : workers;
    return from.length === 0 ? [] : [from[turn++ % from.length]!];
  };
  const enqueue = async (endpointId: string, at?: Date) => {
    if (closed) return;
    await boss.send(QUEUE, { endpointId }, at ? { startAfter: at } : {});
    wakes.at(nextWorker, at);
  };

  /** Runs `drain` now in this process; a failure to even try leaves it to the queue. */
  const drainNow = (endpointId: string) => {
    if (closed) return;
    const run = drain(endpointId).catch(async (error: unknown) => {
      logger.warn({ err: error, endpointId }, 'webhooks: delivery run failed, queued');
      await enqueue(endpointId).catch(() => undefined);
    });
    running.add(run);
    void run.finally(() => running.delete(run));
  };

  async function drain(endpointId: string): Promise<void> {
    if (!(await leaseWebhookEndpoint(knex, endpointId, leaseSeconds))) return; // another deliverer has it
    try {
      while (!closed) {
        const endpoint = await findWebhookEndpoint(knex, endpointId);
        if (!endpoint || endpoint.status !== 'ACTIVE') return;
        if (endpoint.nextAttemptAt && endpoint.nextAttemptAt.getTime() > Date.now()) {
          await enqueue(endpointId, endpoint.nextAttemptAt);
          return;
        }
        const [event] = await userEventsAfter(knex, endpoint.userId, endpoint.deliveredSeq, 1);
        if (!event) return;
        await leaseWebhookEndpoint(knex, endpointId, leaseSeconds, true);
        if (!(await attempt(endpoint, event))) return;
      }
    } finally {
      await releaseWebhookLease(knex, endpointId);
      // An event committed while this run was finishing found the lease taken: look once more.
      if (!closed && (await endpointIsBehind(knex, endpointId))) drainNow(endpointId);
    }
  }

  /** One attempt of the endpoint's next event; true when delivered. */
  async function attempt(endpoint: WebhookEndpointRecord, event: Awaited<ReturnType<typeof userEventsAfter>>[number]): Promise<boolean> {
    const body = pushedEventJson(event);
    const messageId = `msg_${event.eventId}`;
    const now = Date.now();
    const secrets = [endpoint.secret];
    if (endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt.getTime() > now) secrets.push(endpoint.previousSecret);
    const result = await postWebhook(endpoint.url, signedHeaders(messageId, Math.floor(now / 1000), body, secrets), body, {
      timeoutMs: settings.timeoutSeconds * 1000, publicOnly: settings.publicOnly,
    });
    const failures = endpoint.consecutiveFailures + 1;
    let next: { nextAttemptAt: Date | null; disable: string | null } = { nextAttemptAt: null, disable: null };
    if (!result.succeeded) {
      const failingForMs = endpoint.failingSince ? now - endpoint.failingSince.getTime() : 0;
      if (failures >= settings.disableAfterFailures && failingForMs >= settings.disableAfterSeconds * 1000) {
        next = {
          nextAttemptAt: null,
          disable: `${failures} failed attempts in a row since ${endpoint.failingSince!.toISOString()}, the last: ${result.error}`,
        };
      } else {
        next = { nextAttemptAt: new Date(now + retryDelayMs(failures, settings, random)), disable: null };
      }
    }
    await recordAttempt(knex, {
      endpointId: endpoint.id, eventId: event.eventId, seq: event.seq, messageId, attempt: failures,
      succeeded: result.succeeded, statusCode: result.statusCode, error: result.error, durationMs: result.durationMs,
    }, next);
    options.metrics?.attempted(result.succeeded, result.durationMs);
    if (next.disable) options.metrics?.disabled();
    if (next.disable) logger.warn({ endpointId: endpoint.id, reason: next.disable }, 'webhooks: endpoint disabled');
    if (next.nextAttemptAt) await enqueue(endpoint.id, next.nextAttemptAt);
    return result.succeeded;
  }

  for (let i = 0; i < WORKERS; i++) {
    let id = '';
    id = await boss.work<{ endpointId: string }>(QUEUE, { pollingIntervalSeconds: i === 0 ? POLLING_SECONDS : SPARE_POLLING_SECONDS }, async ([job]) => {
      busy.add(id);
      try {
        await drain(job!.data.endpointId);
      } finally {
        busy.delete(id);
      }
    });
    workers.push(id);
  }

  const sweep = async () => {
    for (const endpointId of await endpointsBehind(knex)) drainNow(endpointId);
  };
  const listener = listenForPushedEvents(knex, {
    onNotice: (notice) => {
      // The notice names the users with an active endpoint (read in the committing statement); one
      // from an older release does not, and then every user it names is looked up.
      const users = notice.webhookUserIds ?? notice.userIds;
      if (users.length === 0) return;
      activeEndpointIdsOf(knex, users).then(
        (ids) => ids.forEach(drainNow),
        (error: unknown) => logger.warn({ err: error }, 'webhooks: endpoints lookup failed'),
      );
    },
    onConnected: () => void sweep().catch((error: unknown) => logger.warn({ err: error }, 'webhooks: sweep failed')),
    onError: (error) => logger.warn({ err: error }, 'webhooks: LISTEN connection failed, reconnecting'),
  });
  const sweeper = setInterval(
    () => void sweep().catch((error: unknown) => logger.warn({ err: error }, 'webhooks: sweep failed')),
    settings.sweepSeconds * 1000,
  );

  let closing: Promise<void> | undefined;
  return {
    close: () => (closing ??= (async () => {
      closed = true;
      clearInterval(sweeper);
      wakes.close();
      await listener.close();
      await Promise.allSettled([...running]);
      await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
    })()),
  };
}
