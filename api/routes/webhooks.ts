import { Router, type RequestHandler } from 'express';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../../db/repositories/webhooks.ts';
import type { WebhooksService } from '../../webhooks/service.ts';
import { principalOf } from '../middleware/auth.ts';
import { bearerAuth, registry, z } from '../openapi/operations.ts';
import { errorResponses, page } from '../schemas/common.ts';
import { pushedEventSchema } from '../schemas/events.ts';
import { idParams } from '../schemas/queries.ts';
import { createWebhookBody, deliveriesQuery, webhookDeliverySchema, webhookSchema, webhookWithSecretSchema } from '../schemas/webhooks.ts';
import { parseOrThrow } from '../validation.ts';

const json = <T>(schema: T, description: string) => ({ description, content: { 'application/json': { schema } } });
const secured = { security: [{ [bearerAuth.name]: [] }], tags: ['Webhooks'] };
const OWNER = "The endpoint's owner only: anyone else gets 404.";

registry.registerPath({
  method: 'post', path: '/v1/webhooks', operationId: 'createWebhook', ...secured, summary: "Register a webhook endpoint for the caller's ads and trades",
  description: 'Every event of your /v1/events stream from now on is POSTed to `url`, in that order, signed per the ' +
    'Standard Webhooks spec (headers webhook-id, webhook-timestamp, webhook-signature: `v1,<base64 HMAC-SHA256 of ' +
    '"id.timestamp.body">` keyed by the secret), retried with exponential backoff and jitter until a 2xx, at least ' +
    'once (dedupe by webhook-id). Production accepts https URLs of public hosts only (422 naming url).',
  request: { body: { content: { 'application/json': { schema: createWebhookBody } } } },
  responses: { 201: json(webhookWithSecretSchema, 'The endpoint and its secret'), ...errorResponses(401, 409, 422, 429) },
});
registry.registerPath({
  method: 'get',
  path: '/v1/webhooks',
  operationId: 'listWebhooks',
  ...secured,
  summary: "The caller's webhook endpoints",
  description: 'Every endpoint the caller registered, enabled or not, newest first; secrets are never shown again.',
  responses: { 200: json(z.object({ data: z.array(webhookSchema) }), 'Newest first'), ...errorResponses(401, 429) },
});
registry.registerPath({
  method: 'get', path: '/v1/webhooks/{id}', operationId: 'getWebhook', ...secured, summary: 'One webhook endpoint', description: OWNER,
  request: { params: idParams }, responses: { 200: json(webhookSchema, 'The endpoint'), ...errorResponses(401, 404, 422, 429) },
});
registry.registerPath({
  method: 'delete', path: '/v1/webhooks/{id}', operationId: 'deleteWebhook', ...secured, summary: 'Delete a webhook endpoint', description: OWNER,
  request: { params: idParams }, responses: { 204: { description: 'Deleted; nothing more is delivered to it' }, ...errorResponses(401, 404, 422, 429) },
});
registry.registerPath({
  method: 'post', path: '/v1/webhooks/{id}/rotate-secret', operationId: 'rotateWebhookSecret', ...secured, summary: 'Rotate the signing secret',
  description: `A new secret signs from now on; for 24 hours the previous one signs too (webhook-signature then ` +
    `carries two signatures), so a receiver can switch without missing a delivery. ${OWNER}`,
  request: { params: idParams }, responses: { 200: json(webhookWithSecretSchema, 'The endpoint and its new secret'), ...errorResponses(401, 404, 422, 429) },
});
registry.registerPath({
  method: 'post', path: '/v1/webhooks/{id}/enable', operationId: 'enableWebhook', ...secured, summary: 'Re-enable a disabled endpoint',
  description: `An endpoint is disabled after WEBHOOK_DISABLE_AFTER_FAILURES failures in a row over at least ` +
    `WEBHOOK_DISABLE_AFTER_SECONDS. Enabling resumes delivery where it stopped. On an ACTIVE endpoint it changes ` +
    `nothing (its failure count and next attempt stay) and returns it as it is. ${OWNER}`,
  request: { params: idParams }, responses: { 200: json(webhookSchema, 'The endpoint'), ...errorResponses(401, 404, 422, 429) },
});
registry.registerPath({
  method: 'get',
  path: '/v1/webhooks/{id}/deliveries',
  operationId: 'listWebhookDeliveries',
  ...secured,
  summary: "The endpoint's delivery log",
  description: `Every attempt, newest first, a page at a time: pass \`nextCursor\` back as \`cursor\` until it is ` +
    `null to read back to the first attempt. ${OWNER}`,
  request: { params: idParams, query: deliveriesQuery },
  responses: { 200: json(page(webhookDeliverySchema), 'Attempts, newest first'), ...errorResponses(401, 404, 422, 429) },
});
registry.registerWebhook({
  method: 'post', path: 'pushedEvent', operationId: 'receivePushedEvent', tags: ['Webhooks'], security: [], summary: 'A pushed event, as a webhook delivery',
  description: 'The body is the event (the same JSON as the data of a server-sent event); answer 2xx within WEBHOOK_TIMEOUT_SECONDS.',
  request: { body: { content: { 'application/json': { schema: pushedEventSchema } } } },
  responses: { 200: { description: 'Received (any 2xx)' } },
});

export function presentWebhook(endpoint: WebhookEndpointRecord) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    status: endpoint.status,
    disabledReason: endpoint.disabledReason,
    deliveredThrough: endpoint.deliveredSeq,
    consecutiveFailures: endpoint.consecutiveFailures,
    nextAttemptAt: endpoint.nextAttemptAt?.toISOString() ?? null,
    createdAt: endpoint.createdAt.toISOString(),
    updatedAt: endpoint.updatedAt.toISOString(),
  };
}

function presentDelivery(delivery: WebhookDeliveryRecord) {
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    eventSeq: delivery.seq,
    messageId: delivery.messageId,
    attempt: delivery.attempt,
    succeeded: delivery.succeeded,
    statusCode: delivery.statusCode,
    error: delivery.error,
    durationMs: delivery.durationMs,
    attemptedAt: delivery.attemptedAt.toISOString(),
  };
}

/** /v1/webhooks: a user's endpoints, owner only. */
export function webhooksRouter(deps: { webhooks: WebhooksService; requireAuth: RequestHandler }, router: Router = Router()): Router {
  const { webhooks, requireAuth } = deps;
  router.post('/webhooks', requireAuth, async (req, res) => {
    const { endpoint, secret } = await webhooks.register(principalOf(req), parseOrThrow(createWebhookBody, req.body));
    res.status(201).json({ ...presentWebhook(endpoint), secret });
  });
  router.get('/webhooks', requireAuth, async (req, res) => {
    res.json({ data: (await webhooks.list(principalOf(req))).map(presentWebhook) });
  });
  router.get('/webhooks/:id', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    res.json(presentWebhook(await webhooks.get(principalOf(req), id)));
  });
  router.delete('/webhooks/:id', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    await webhooks.remove(principalOf(req), id);
    res.status(204).end();
  });
  router.post('/webhooks/:id/rotate-secret', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const { endpoint, secret } = await webhooks.rotateSecret(principalOf(req), id);
    res.json({ ...presentWebhook(endpoint), secret });
  });
  router.post('/webhooks/:id/enable', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    res.json(presentWebhook(await webhooks.enable(principalOf(req), id)));
  });
  router.get('/webhooks/:id/deliveries', requireAuth, async (req, res) => {
    const { id } = parseOrThrow(idParams, req.params);
    const { cursor, limit = 25 } = parseOrThrow(deliveriesQuery, req.query);
    const { items, nextCursor } = await webhooks.deliveries(principalOf(req), id, limit, cursor);
    res.json({ data: items.map(presentDelivery), nextCursor });
  });
  return router;
}
