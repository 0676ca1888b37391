import { createRequire } from 'node:module';
import {
  makeWorkflowExporter, OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor, OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { ClientInterceptors } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import { currentTracing } from './tracing.ts';

/**
 * The Temporal client's interceptors when tracing is on: starting a workflow, sending an Update or
 * a signal runs in a span and carries the active trace context to the workflow in its headers.
 * Undefined (no interceptor at all) with tracing off.
 */
export function tracingClientInterceptors(): ClientInterceptors | undefined {
  return currentTracing() ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;
}

/**
 * What `bundleWorkflowCode` adds with tracing on: Temporal's OpenTelemetry workflow interceptors
 * (spans for the workflow run, its Updates and the activities it schedules, the trace context
 * handed on in each activity's headers). Nothing with tracing off, so the bundle (and the replayed
 * histories) stay as they were.
 */
export function tracingBundleOptions(): { workflowInterceptorModules?: string[] } {
  if (!currentTracing()) return {};
  return { workflowInterceptorModules: [createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')] };
}

/**
 * What `Worker.create` adds with tracing on: activity interceptors (a span per activity, child of
 * the context in its headers, so a proof's span joins the trade's trace across processes) and the
 * sink through which the workflow sandbox's spans are exported by this process's provider.
 */
export function tracingWorkerOptions(): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  const tracing = currentTracing();
  if (!tracing) return {};
  return {
    interceptors: {
      client: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
      activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}
