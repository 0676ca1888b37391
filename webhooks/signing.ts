import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp`
 * (unix seconds) and `webhook-signature`, a space-separated list of `v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>">` keyed by the base64 part of the `whsec_` secret. While a secret is
 * being rotated both the new and the previous one sign, so a receiver holding either verifies.
 */

/** A fresh secret: `whsec_` and 32 random bytes in base64 (the Standard Webhooks form). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function sign(secret: string, content: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
}

/** The three headers of one delivery attempt of `body`, signed by every secret in `secrets`. */
export function signedHeaders(messageId: string, timestampSeconds: number, body: string, secrets: string[]): Record<string, string> {
  const content = `${messageId}.${timestampSeconds}.${body}`;
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((secret) => sign(secret, content)).join(' '),
  };
}
