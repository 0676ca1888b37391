import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** What the dispatcher reports: each attempt's outcome and time, and endpoints disabled. */
export interface WebhookMetrics {
  attempted(succeeded: boolean, durationMs: number): void;
  disabled(): void;
}

/**
 * Pushed-status metrics on `registry`: `relayer_event_streams` (open server-sent event streams of
 * this process, read at scrape time from `openStreams`), `relayer_webhook_attempts_total{outcome}`,
 * `relayer_webhook_attempt_seconds` and `relayer_webhook_endpoints_disabled_total`.
 */
export function pushMetrics(registry: Registry, openStreams: () => number): WebhookMetrics {
  new Gauge({
    name: 'relayer_event_streams', help: 'Open server-sent event streams in this process', registers: [registry],
    collect() { this.set(openStreams()); },
  });
  const attempts = new Counter({
    name: 'relayer_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const seconds = new Histogram({
    name: 'relayer_webhook_attempt_seconds',
    help: 'Time of one webhook delivery attempt',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const disabled = new Counter({
    name: 'relayer_webhook_endpoints_disabled_total',
    help: 'Webhook endpoints disabled after sustained failure',
    registers: [registry],
  });
  return {
    attempted(succeeded, durationMs) {
      attempts.inc({ outcome: succeeded ? 'delivered' : 'failed' });
      seconds.observe(durationMs / 1000);
    },
    disabled: () => disabled.inc(),
  };
}
