import { SpanKind } from '@opentelemetry/api';
import { contextOf, inSpan, traceCarrier } from './spans.ts';

/**
 * A job's data with the active trace context added (`traceparent`, `tracestate`), so that the
 * process that runs the job continues the trace of whoever queued it (the embedded orchestrator's
 * pg-boss jobs). With tracing off the data is returned as it is.
 */
export function withTraceContext<T extends object>(data: T): T {
  const carrier = traceCarrier();
  return carrier.traceparent ? { ...data, ...carrier } : data;
}

/**
 * Runs a job's handler in a span `job <queue>` (kind consumer) whose parent is the context the
 * job's data carries (`withTraceContext`); a job queued without one starts a trace of its own.
 */
export function runTracedJob<T>(queue: string, data: object, fn: () => Promise<T>): Promise<T> {
  return inSpan(
    `job ${queue}`,
    {
      kind: SpanKind.CONSUMER,
      parent: contextOf(data as Record<string, unknown>),
      attributes: { 'messaging.system': 'pg-boss', 'messaging.destination.name': queue },
    },
    fn,
  );
}
