import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Principal } from '../domain/principal.ts';
import {
  deleteWebhookEndpoint, enableWebhookEndpoint, findWebhookEndpoint, insertWebhookEndpoint,
  listWebhookDeliveries, listWebhookEndpoints, rotateWebhookSecret, type WebhookEndpointRecord,
} from '../db/repositories/webhooks.ts';
import { WebhookInputError, WebhookLimitError, WebhookNotFoundError } from './errors.ts';
import { newWebhookSecret } from './signing.ts';
import { webhookUrlProblem, type UrlPolicy } from './url-policy.ts';

export interface WebhooksSettings {
  /** Production URL rules (https, public addresses only). */
  production: boolean;
  /** WEBHOOK_MAX_ENDPOINTS_PER_USER. */
  maxEndpointsPerUser: number;
  /** How long a rotated-out secret keeps signing beside the new one. */
  previousSecretTtlSeconds: number;
  /** Name resolution for the URL check (tests may replace it). */
  resolve?: UrlPolicy['resolve'];
}

export interface WebhooksDeps {
  knex: Knex;
  settings: WebhooksSettings;
}

/**
 * A user's webhook endpoints: register (the URL checked, a Standard Webhooks secret issued), list,
 * read, delete, rotate the secret, re-enable, read the delivery log. Every operation is the owner's
 * only: another user's endpoint is 404, as if it did not exist.
 */
export function createWebhooksService(deps: WebhooksDeps) {
  const { knex, settings } = deps;

  async function own(principal: Principal, id: string): Promise<WebhookEndpointRecord> {
    const endpoint = await findWebhookEndpoint(knex, id);
    if (!endpoint || endpoint.userId !== principal.userId) throw new WebhookNotFoundError(id);
    return endpoint;
  }

  return {
    /** Registers `url` for everything about the caller's ads and trades from now on; the secret is shown here and on rotation only. */
    async register(principal: Principal, input: { url: string; description?: string }) {
      const problem = await webhookUrlProblem(input.url, { production: settings.production, resolve: settings.resolve });
      if (problem) throw new WebhookInputError('url', problem);
      const secret = newWebhookSecret();
      const endpoint = await insertWebhookEndpoint(
        knex, { id: randomUUID(), userId: principal.userId, url: input.url, description: input.description ?? '', secret }, settings.maxEndpointsPerUser,
      );
      if (!endpoint) throw new WebhookLimitError(`at most ${settings.maxEndpointsPerUser} webhook endpoints per user: delete one first`);
      return { endpoint, secret };
    },

    list: (principal: Principal) => listWebhookEndpoints(knex, principal.userId),

    get: (principal: Principal, id: string) => own(principal, id),

    async remove(principal: Principal, id: string): Promise<void> {
      await own(principal, id);
      await deleteWebhookEndpoint(knex, id);
    },

    /** A new secret; the previous one keeps signing beside it for the rotation window. */
    async rotateSecret(principal: Principal, id: string) {
      await own(principal, id);
      const secret = newWebhookSecret();
      await rotateWebhookSecret(knex, id, secret, new Date(Date.now() + settings.previousSecretTtlSeconds * 1000));
      return { endpoint: (await findWebhookEndpoint(knex, id))!, secret };
    },

    /** Re-enables a disabled endpoint: delivery resumes from where it stopped. On an ACTIVE one a no-op (its backoff and failure count stay). */
    async enable(principal: Principal, id: string) {
      await own(principal, id);
      await enableWebhookEndpoint(knex, id);
      return (await findWebhookEndpoint(knex, id))!;
    },

    /** One page of the endpoint's delivery log, newest first; `nextCursor` pages on to the oldest attempt. */
    async deliveries(principal: Principal, id: string, limit: number, cursor?: string) {
      await own(principal, id);
      return listWebhookDeliveries(knex, id, limit, cursor);
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
