import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import {
  BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler, type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** The release (package.json `version`): the resource's service.version, so a trace names what ran. */
export const SERVICE_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * The sampler, set here rather than left to the SDK's environment defaults: a trace's root (an API
 * request, a timer, a job with no parent: telemetry/http.ts makes every API request a root) is sampled
 * with probability OTEL_TRACES_SAMPLER_ARG (0 to 1, default 1: every trace); a span with a parent
 * follows it, so a trace is whole across api, worker and prover. Parents only ever come from our own
 * processes (Temporal headers, job data), never from a public caller.
 */
export function traceSampler(env: NodeJS.ProcessEnv = process.env): Sampler {
  const given = env.OTEL_TRACES_SAMPLER_ARG;
  const ratio = given === undefined || given === '' ? 1 : Number(given);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) throw new Error(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, received '${given}'`);
  return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
}

/** The tracer name every span of ours is made by (the instrumentation scope in a backend). */
export const TRACER_NAME = 'relayer';

/** What a process that traces holds: its provider's processor and resource (Temporal's workflow sink exports through them). */
export interface Tracing {
  serviceName: string;
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Exports the spans still buffered (a process about to exit calls it). */
  flush(): Promise<void>;
  /** Flushes and stops exporting. */
  shutdown(): Promise<void>;
}

let current: Tracing | undefined;

/**
 * True when spans are to be exported: OTEL_EXPORTER_OTLP_ENDPOINT (or its traces-only form) is set
 * and OTEL_SDK_DISABLED is not `true`. Off, nothing is registered: @opentelemetry/api's tracer is
 * its no-op one and the hooks below pass straight through.
 */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * OTEL_RESOURCE_ATTRIBUTES as the OpenTelemetry specification writes it: `key=value` pairs separated
 * by commas, values percent-encoded; a pair without `=` or with an empty key is skipped.
 */
export function resourceAttributesOf(text: string | undefined): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    const key = pair.slice(0, at).trim();
    if (at <= 0 || key === '') continue;
    try {
      attributes[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      attributes[key] = pair.slice(at + 1).trim();
    }
  }
  return attributes;
}

/**
 * Starts tracing for this process once (later calls return the first one): a tracer provider with
 * a batching OTLP/HTTP exporter (endpoint, headers, timeouts and batching from the standard
 * OTEL_* variables), W3C trace context propagation and an AsyncLocalStorage context manager, all
 * registered globally. Returns undefined, registering nothing, when tracing is not configured.
 * `serviceName` is used unless OTEL_SERVICE_NAME is set.
 */
export function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): Tracing | undefined {
  if (current) return current;
  if (!tracingConfigured(env)) return undefined;
  const name = env.OTEL_SERVICE_NAME || serviceName;
  const resource = new Resource({
    // OTEL_RESOURCE_ATTRIBUTES first (on Kubernetes the pod, namespace, node and deployment: deploy/k8s/base), ours over them.
    ...resourceAttributesOf(env.OTEL_RESOURCE_ATTRIBUTES),
    'service.name': name, 'service.namespace': 'relayer', 'service.version': SERVICE_VERSION,
    // The pod's name on Kubernetes (its hostname), the machine's elsewhere: which replica made a span.
    'service.instance.id': hostname(),
  });
  // The URL from `env` (the exporter itself would read process.env): the traces endpoint as given, or the base endpoint's /v1/traces.
  const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || `${env.OTEL_EXPORTER_OTLP_ENDPOINT!.replace(/\/+$/, '')}/v1/traces`;
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor], sampler: traceSampler(env) });
  provider.register({ contextManager: new AsyncLocalStorageContextManager(), propagator: new W3CTraceContextPropagator() });
  current = {
    serviceName: name,
    spanProcessor,
    resource,
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
      current = undefined;
    },
  };
  return current;
}

/** This process's tracing, when started. */
export function currentTracing(): Tracing | undefined {
  return current;
}

/** Our tracer (the no-op one when tracing is off). */
export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}
