import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Context } from '@opentelemetry/api';
import { currentTracing, tracer } from './tracing.ts';

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent (default: the active context). */
  parent?: Context;
}

/**
 * Runs `fn` inside a new span named `name`, child of the active span (or `options.parent`), which
 * ends when `fn` settles and records its error. With tracing off it is `fn()` and nothing else.
 */
export function inSpan<T>(name: string, options: SpanOptions, fn: () => Promise<T>): Promise<T> {
  if (!currentTracing()) return fn();
  const parent = options.parent ?? context.active();
  return tracer().startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, parent, async (span) => {
    try {
      return await fn();
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The W3C `traceparent` (and `tracestate`) of the active span, to carry in a job's data; empty with tracing off or no span. */
export function traceCarrier(): { traceparent?: string; tracestate?: string } {
  if (!currentTracing()) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** The context a carrier (`traceCarrier()`'s fields in a job, or HTTP headers) names as parent. */
export function contextOf(carrier: Record<string, unknown>): Context {
  const headers: Record<string, string> = {};
  for (const key of ['traceparent', 'tracestate']) if (typeof carrier[key] === 'string') headers[key] = carrier[key] as string;
  return propagation.extract(context.active(), headers);
}

export { SpanKind, trace };
