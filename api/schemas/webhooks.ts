import { z } from '../openapi/operations.ts';
import { cursor, limit, text } from './common.ts';

/** Request and response shapes of /v1/webhooks. */

export const createWebhookBody = z.strictObject({
  url: text().min(1).max(2048).openapi({
    description: 'Where deliveries are POSTed. Production: https to a public address only.',
    example: 'https://bot.example.com/relayer',
  }),
  description: text().max(500).optional(),
}).openapi('CreateWebhookBody');

export const webhookSchema = z.object({
  id: z.string().uuid(),
  url: z.string(),
  description: z.string(),
  status: z.enum(['ACTIVE', 'DISABLED']),
  disabledReason: z.string().nullable(),
  deliveredThrough: z.number().int().openapi({ description: 'Your /v1/events stream is delivered up to this id; deliveries go in that order.' }),
  consecutiveFailures: z.number().int(),
  nextAttemptAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
}).openapi('Webhook');

export const webhookWithSecretSchema = webhookSchema.extend({
  secret: z.string().openapi({ description: 'The Standard Webhooks signing secret (whsec_...). Shown on creation and rotation only.' }),
}).openapi('WebhookWithSecret');

export const webhookDeliverySchema = z.object({
  id: z.string(),
  eventId: z.string(),
  eventSeq: z.number().int().openapi({ description: 'The event id in your /v1/events stream.' }),
  messageId: z.string().openapi({ description: 'The webhook-id header: the same on every attempt of one event.' }),
  attempt: z.number().int(),
  succeeded: z.boolean(),
  statusCode: z.number().int().nullable(),
  error: z.string().nullable(),
  durationMs: z.number().int(),
  attemptedAt: z.string(),
}).openapi('WebhookDelivery');

export const deliveriesQuery = z.strictObject({ cursor, limit });
