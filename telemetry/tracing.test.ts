import { context, trace } from '@opentelemetry/api';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { processLoggerOptions } from '../entrypoints/logger.ts';
import { tracingMiddleware } from './http.ts';
import { runTracedJob, withTraceContext } from './jobs.ts';
import { inSpan } from './spans.ts';
import { tracingBundleOptions, tracingClientInterceptors, tracingWorkerOptions } from './temporal.ts';
import { currentTracing, resourceAttributesOf, SERVICE_VERSION, startTracing, traceSampler, tracingConfigured } from './tracing.ts';

describe('tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT): nothing registered, every hook passes through', () => {
  afterAll(async () => currentTracing()?.shutdown());

  it('registers no provider and adds nothing to jobs, the workflow bundle or the Temporal client and worker', async () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(startTracing('relayer-test', {})).toBeUndefined();
    expect(currentTracing()).toBeUndefined();
    expect(withTraceContext({ tradeId: 't' })).toEqual({ tradeId: 't' });
    expect(tracingBundleOptions()).toEqual({});
    expect(tracingClientInterceptors()).toBeUndefined();
    expect(tracingWorkerOptions()).toEqual({});
    expect(await inSpan('proof', {}, async () => trace.getSpan(context.active()))).toBeUndefined();
    expect(await runTracedJob('trade-prove', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, async () => 'ran')).toBe('ran');

    const app = express();
    app.use(tracingMiddleware());
    app.get('/x', (_req, res) => { res.json({ span: trace.getSpan(context.active()) !== undefined }); });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    expect(await (await fetch(`http://127.0.0.1:${port}/x`)).json()).toEqual({ span: false });
    server.close();
  });

  it('with the endpoint set, starts once, and job data then carries the active trace context', async () => {
    const exports: string[] = [];
    const collector = createServer((req, res) => { exports.push(req.url!); req.resume(); req.on('end', () => res.end('{}')); });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/`;
    const tracing = startTracing('relayer-test', { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })!;
    expect(tracing.serviceName).toBe('relayer-test');
    expect(startTracing('other', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })).toBe(tracing);
    const data = await inSpan('queue', {}, async () => withTraceContext({ tradeId: 't' }));
    expect(data).toMatchObject({ tradeId: 't', traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/) });
    const parentTrace = (data as unknown as { traceparent: string }).traceparent.split('-')[1];
    const inJob = await runTracedJob('trade-prove', data, async () => trace.getSpan(context.active())!.spanContext().traceId);
    expect(inJob).toBe(parentTrace);
    expect(tracingBundleOptions().workflowInterceptorModules).toHaveLength(1);
    expect(tracing.resource.attributes).toMatchObject({ 'service.name': 'relayer-test', 'service.version': SERVICE_VERSION, 'service.instance.id': expect.any(String) });
    expect(SERVICE_VERSION).toMatch(/^\d+\.\d+\.\d+/);
    // The pod's facts from OTEL_RESOURCE_ATTRIBUTES (deploy/k8s/base sets them from the Downward API); ours win on service.*.
    expect(resourceAttributesOf('k8s.pod.name=relayer-api-7d9f,k8s.namespace.name=relayer,service.name=spoofed,bad,=x,k8s.node.name=node%201'))
      .toEqual({ 'k8s.pod.name': 'relayer-api-7d9f', 'k8s.namespace.name': 'relayer', 'service.name': 'spoofed', 'k8s.node.name': 'node 1' });

    // A public caller's traceparent decides nothing: not the trace, not sampling (sampled or not); it is a link.
    const app = express();
    app.use(tracingMiddleware());
    app.get('/x', (_req, res) => {
      const span = trace.getSpan(context.active())!;
      res.json({ traceId: span.spanContext().traceId, sampled: span.spanContext().traceFlags & 1, recording: span.isRecording(), links: (span as any).links });
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
    const callerTrace = '0af7651916cd43dd8448eb211c80319c';
    for (const flags of ['00', '01']) {
      const seen = await (await fetch(url, { headers: { traceparent: `00-${callerTrace}-b7ad6b7169203331-${flags}` } })).json();
      expect(seen.traceId, `flags ${flags}`).not.toBe(callerTrace);
      expect({ sampled: seen.sampled, recording: seen.recording }, `flags ${flags}`).toEqual({ sampled: 1, recording: true });
      expect(seen.links, `flags ${flags}`).toEqual([expect.objectContaining({ context: expect.objectContaining({ traceId: callerTrace }) })]);
    }
    const plain = await (await fetch(url)).json();
    expect(plain.links).toEqual([]);
    server.close();

    // The sampler: roots at OTEL_TRACES_SAMPLER_ARG, children follow their parent; a bad ratio is named.
    expect(() => traceSampler({ OTEL_TRACES_SAMPLER_ARG: '1.5' })).toThrow(/OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, received '1.5'/);
    expect(traceSampler({ OTEL_TRACES_SAMPLER_ARG: '0.25' }).toString()).toMatch(/ParentBased\{root=TraceIdRatioBased\{0\.25\}/);

    // A log line written inside a span carries its trace and span ids; one outside any span carries none.
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino(processLoggerOptions({ level: 'info' }), { write: (line: string) => { lines.push(JSON.parse(line)); } });
    const ids = await inSpan('logged', {}, async () => {
      logger.info('inside');
      return trace.getSpan(context.active())!.spanContext();
    });
    logger.info('outside');
    expect(lines[0]).toMatchObject({ msg: 'inside', trace_id: ids.traceId, span_id: ids.spanId });
    expect(lines[1]!.msg).toBe('outside');
    expect(lines[1]).not.toHaveProperty('trace_id');

    // The spans go to the endpoint given (not the exporter's default localhost:4318).
    await tracing.flush();
    expect(exports).toContain('/v1/traces');
    await tracing.shutdown();
    collector.close();
  });
});
