import type { Knex } from 'knex';
import { decodeSequenceCursor, encodeSequenceCursor, type Page } from '../pagination.ts';

/** A webhook endpoint as stored (webhook_endpoints). */
export interface WebhookEndpointRecord {
  id: string;
  userId: string;
  url: string;
  description: string;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  status: 'ACTIVE' | 'DISABLED';
  disabledReason: string | null;
  /** The user's feed is delivered up to here. */
  deliveredSeq: number;
  consecutiveFailures: number;
  failingSince: Date | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One delivery attempt (webhook_deliveries). */
export interface WebhookDeliveryRecord {
  id: string;
  endpointId: string;
  eventId: string;
  seq: number;
  messageId: string;
  attempt: number;
  succeeded: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: Date;
}

const ENDPOINT = [
  'id', 'user_id as userId', 'url', 'description', 'secret', 'previous_secret as previousSecret',
  'previous_secret_expires_at as previousSecretExpiresAt', 'status', 'disabled_reason as disabledReason',
  'delivered_seq as deliveredSeq', 'consecutive_failures as consecutiveFailures', 'failing_since as failingSince',
  'next_attempt_at as nextAttemptAt', 'created_at as createdAt', 'updated_at as updatedAt',
];

const toEndpoint = (row: WebhookEndpointRecord | undefined): WebhookEndpointRecord | undefined =>
  row && { ...row, deliveredSeq: Number(row.deliveredSeq) };

export interface NewWebhookEndpoint { id: string; userId: string; url: string; description: string; secret: string }

/**
 * Inserts an endpoint that starts delivering after the user's current last event (no history),
 * unless the user already has `maxPerUser`: then nothing is inserted and the answer is undefined.
 * The count and the insert run in one transaction holding a per-user advisory lock, so parallel
 * registrations by one user cannot together pass the cap.
 */
export async function insertWebhookEndpoint(knex: Knex, endpoint: NewWebhookEndpoint, maxPerUser: number): Promise<WebhookEndpointRecord | undefined> {
  return knex.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`webhook-endpoints:${endpoint.userId}`]);
    if ((await countWebhookEndpoints(trx, endpoint.userId)) >= maxPerUser) return undefined;
    const last = trx('user_event_counters').select('last_seq').where({ user_id: endpoint.userId });
    await trx('webhook_endpoints').insert({
      id: endpoint.id, user_id: endpoint.userId, url: endpoint.url, description: endpoint.description, secret: endpoint.secret,
      delivered_seq: trx.raw('coalesce((?), 0)', [last]),
    });
    return (await findWebhookEndpoint(trx, endpoint.id))!;
  });
}

export async function findWebhookEndpoint(knex: Knex, id: string): Promise<WebhookEndpointRecord | undefined> {
  return toEndpoint(await knex('webhook_endpoints').select(ENDPOINT).where({ id }).first());
}

export async function listWebhookEndpoints(knex: Knex, userId: string): Promise<WebhookEndpointRecord[]> {
  const rows: WebhookEndpointRecord[] = await knex('webhook_endpoints').select(ENDPOINT).where({ user_id: userId }).orderBy([
    { column: 'created_at', order: 'desc' },
    { column: 'id', order: 'desc' },
  ]);
  return rows.map((row) => toEndpoint(row)!);
}

export async function countWebhookEndpoints(knex: Knex, userId: string): Promise<number> {
  const row = await knex('webhook_endpoints').where({ user_id: userId }).count<{ count: string }>('* as count').first();
  return Number(row?.count ?? 0);
}

export async function deleteWebhookEndpoint(knex: Knex, id: string): Promise<void> {
  await knex('webhook_endpoints').where({ id }).delete();
}

/** A new signing secret; the old one keeps signing beside it until `previousExpiresAt`. */
export async function rotateWebhookSecret(knex: Knex, id: string, secret: string, previousExpiresAt: Date): Promise<void> {
  await knex('webhook_endpoints').where({ id }).update({
    previous_secret: knex.ref('secret'), previous_secret_expires_at: previousExpiresAt, secret, updated_at: knex.fn.now(),
  });
}

/**
 * A DISABLED endpoint back to ACTIVE with a clean failure record (the owner fixed the receiver).
 * An ACTIVE one is left as it is: clearing its failures and backoff there would let a caller who
 * enables in a loop defeat the retry backoff and the auto-disable.
 */
export async function enableWebhookEndpoint(knex: Knex, id: string): Promise<void> {
  await knex('webhook_endpoints').where({ id, status: 'DISABLED' }).update({
    status: 'ACTIVE', disabled_reason: null, consecutive_failures: 0, failing_since: null, next_attempt_at: null, updated_at: knex.fn.now(),
  });
}

/** Active endpoints of these users (a notice's recipients). */
export async function activeEndpointIdsOf(knex: Knex, userIds: string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const rows: Array<{ id: string }> = await knex('webhook_endpoints').select('id').whereIn('user_id', userIds).andWhere({ status: 'ACTIVE' });
  return rows.map((row) => row.id);
}

/** Active endpoints behind their user's feed and due (not waiting out a backoff, not leased): the sweep's work. */
export async function endpointsBehind(knex: Knex, limit = 1000): Promise<string[]> {
  const rows: Array<{ id: string }> = await knex('webhook_endpoints as w')
    .join('user_event_counters as c', 'c.user_id', 'w.user_id')
    .select('w.id')
    .where('w.status', 'ACTIVE')
    .andWhereRaw('w.delivered_seq < c.last_seq')
    .andWhere((q) => q.whereNull('w.next_attempt_at').orWhere('w.next_attempt_at', '<=', knex.fn.now()))
    .andWhere((q) => q.whereNull('w.leased_until').orWhere('w.leased_until', '<', knex.fn.now()))
    .limit(limit);
  return rows.map((row) => row.id);
}

/** Takes (or renews, with `renew`) the endpoint's delivery lease for `seconds`; false when another worker holds it. */
export async function leaseWebhookEndpoint(knex: Knex, id: string, seconds: number, renew = false): Promise<boolean> {
  const query = knex('webhook_endpoints').where({ id }).update({ leased_until: knex.raw(`now() + make_interval(secs => ?)`, [seconds]) });
  if (!renew) query.andWhere((q) => q.whereNull('leased_until').orWhere('leased_until', '<', knex.fn.now()));
  return (await query) === 1;
}

export async function releaseWebhookLease(knex: Knex, id: string): Promise<void> {
  await knex('webhook_endpoints').where({ id }).update({ leased_until: null });
}

/** The endpoint is active, its user has events it has not delivered yet, and no backoff holds it. */
export async function endpointIsBehind(knex: Knex, id: string): Promise<boolean> {
  const row = await knex('webhook_endpoints as w').join('user_event_counters as c', 'c.user_id', 'w.user_id')
    .select('w.id').where('w.id', id).andWhere('w.status', 'ACTIVE').andWhereRaw('w.delivered_seq < c.last_seq')
    .andWhere((q) => q.whereNull('w.next_attempt_at').orWhere('w.next_attempt_at', '<=', knex.fn.now()))
    .first();
  return row !== undefined;
}

/** What one delivery attempt found: the delivery log's row before it is written (no id, no time yet). */
export type AttemptOutcome = Omit<WebhookDeliveryRecord, 'id' | 'attemptedAt'>;

/** Logs an attempt and moves the endpoint: on success its position; on failure its failure record, next attempt or disabling. */
export async function recordAttempt(
  knex: Knex,
  outcome: AttemptOutcome,
  next: { nextAttemptAt: Date | null; disable: string | null },
): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx('webhook_deliveries').insert({
      endpoint_id: outcome.endpointId, event_id: outcome.eventId, seq: outcome.seq, message_id: outcome.messageId, attempt: outcome.attempt,
      succeeded: outcome.succeeded, status_code: outcome.statusCode, error: outcome.error, duration_ms: outcome.durationMs,
    });
    const endpoint = trx('webhook_endpoints').where({ id: outcome.endpointId });
    if (outcome.succeeded) {
      await endpoint.andWhere('delivered_seq', '<', outcome.seq).update({
        delivered_seq: outcome.seq, consecutive_failures: 0, failing_since: null, next_attempt_at: null, updated_at: trx.fn.now(),
      });
    } else {
      await endpoint.update({
        consecutive_failures: trx.raw('consecutive_failures + 1'),
        failing_since: trx.raw('coalesce(failing_since, now())'),
        next_attempt_at: next.nextAttemptAt,
        ...(next.disable ? { status: 'DISABLED', disabled_reason: next.disable } : {}),
        updated_at: trx.fn.now(),
      });
    }
  });
}

/** The name of the delivery log's cursors (a cursor of another list is refused). */
const DELIVERIES = 'webhook_deliveries';

/**
 * One page of the endpoint's delivery log, newest first (by the attempt's id, which only grows),
 * after `cursor`: keyset pagination over the (endpoint_id, id) index, so every attempt can be read
 * however long the log is, and attempts logged between pages are never skipped or repeated.
 */
export async function listWebhookDeliveries(knex: Knex, endpointId: string, limit: number, cursor?: string): Promise<Page<WebhookDeliveryRecord>> {
  const query = knex('webhook_deliveries')
    .select('id', 'endpoint_id as endpointId', 'event_id as eventId', 'seq', 'message_id as messageId', 'attempt', 'succeeded',
      'status_code as statusCode', 'error', 'duration_ms as durationMs', 'attempted_at as attemptedAt')
    .where({ endpoint_id: endpointId }).orderBy('id', 'desc').limit(limit + 1);
  if (cursor !== undefined) query.andWhere('id', '<', decodeSequenceCursor(cursor, DELIVERIES));
  const rows = (await query).map((row: WebhookDeliveryRecord) => ({ ...row, id: String(row.id), eventId: String(row.eventId), seq: Number(row.seq) }));
  if (rows.length <= limit) return { items: rows, nextCursor: null };
  const items = rows.slice(0, limit);
  return { items, nextCursor: encodeSequenceCursor(items[items.length - 1]!.id, DELIVERIES) };
}
